"""What a criterion asks about the *state* of something the note names, read against the state the note gives
it: how severe a condition is ("severe Alzheimer's disease" against "moderate Alzheimer's disease"), whether it
is controlled or treated ("uncontrolled diabetes" against "well controlled on metformin", "untreated brain
metastases" against "s/p radiosurgery"), whether a cancer is active ("active malignancy" against "in remission"),
whether the patient smokes now ("current smoker" against "quit 5 years ago"), whether a gene is altered and how
("EGFR mutation" against "EGFR exon 19 deletion", "KRAS G12C" against "KRAS G12D", "MSI-H" against "MSS"), a
virus's genotype, and when an event happened ("stroke within the past 14 days" against "10 days ago").

`state(note, criterion)` answers with a `State`: `holds` True or False when the note gives the state, None when
the note names the thing but not its state (the judge then decides by the criterion's kind: an exclusion the
note does not show does not apply). None overall: the criterion asks no such state, or the note does not name
the thing.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from backend.screening.note_reader import NUMBER_WORD, NUMBER_WORDS, WORD, NoteText, fold, key_stems, norm


class State(NamedTuple):
    holds: bool | None
    reason: str
    sentence: int | None


def _stems(text: str) -> list[str]:
    return [norm(w) for w in WORD.findall(fold(text)) if not w.isdigit()]


def _near(sentence: str, cue: re.Pattern[str], stems: list[str], reach: int = 4) -> re.Match[str] | None:
    """The cue in `sentence` with all of `stems` among the `reach` words after it, or all before it."""
    for m in cue.finditer(sentence):
        after = _stems(sentence[m.end():])[:reach]
        before = _stems(sentence[: m.start()])[-reach:]
        if all(s in after for s in stems) or all(s in before for s in stems):
            return m
    return None


def _leads(criterion: str, m: re.Match[str]) -> bool:
    """The qualifier opens what the criterion is about ("Severe asthma", "Patients with uncontrolled
    hypertension"), not one item of a longer list ("…obstruction, such as severe abdominal pain")."""
    before = criterion[: m.start()]
    return len(WORD.findall(before)) <= 5 and not re.search(r"[,;(]|\b(?:or|and|such as|including|e\.g|other than|"
                                                            r"except)\b", before)


def _named(note: NoteText, stems: list[str]) -> int | None:
    """The first sentence whose clause names all of `stems` and does not deny them."""
    hit = note.mention(stems)
    return hit[1] if hit and hit[0] == "present" else None


# ---- severity and control of a condition --------------------------------------------------------------

_SEVERITY = ("mild", "moderate", "severe")
_CRITERION_SEVERITY = re.compile(r"\b(mild|moderate|severe)(?:ly)?(?:\s*(?:to|-|–|or|and/or)\s*(?:very\s+)?"
                                 r"(mild|moderate|severe)(?:ly)?)?(\s+(?:and/or|or)\s+(?:uncontrolled|poorly[- ]"
                                 r"controlled|refractory))?\s+((?:[\w'-]+\s*){1,4})", re.I)
_NOTE_SEVERITY = re.compile(r"\b(mild|moderate|severe)(?:ly)?\b", re.I)
_CRITERION_CONTROL = re.compile(r"\b(?:(?:untreated|uncontrolled)\s+(?:or|and/or)\s+)?"
                                r"(?:(?<!previously )untreated|uncontrolled|poorly[- ]controlled|"
                                r"not (?:well |adequately )?controlled|"
                                r"inadequately[- ]controlled|badly[- ]controlled)\s+((?:[\w'-]+\s*){1,4})", re.I)
_UNCONTROLLED = re.compile(r"\b(?:uncontrolled|poorly[- ]controlled|not (?:well |adequately )?controlled|"
                           r"inadequately[- ]controlled|badly[- ]controlled|refractory)\b", re.I)
_CONTROLLED = re.compile(r"\b(?:well[- ]controlled|(?:is |was |remains )?controlled (?:on|with|by)|stable on|"
                         r"under (?:good )?control|well[- ]managed|optimally controlled)\b", re.I)
# against "untreated": any treatment the note reports for it
_TREATED = re.compile(rf"{_CONTROLLED.pattern}|\b(?:s/p|status post|treated (?:with|by)|"
                      r"on (?:a |an )?[\w-]+ (?:diet|therapy)|(?:surgically )?(?:resected|irradiated))\b", re.I)
_NOT_TREATED = re.compile(r"\b(?:untreated|not (?:yet )?(?:been )?treated|treatment[- ]na[iï]ve|"
                          r"never (?:been )?treated)\b", re.I)
_CRITERION_ACTIVE = re.compile(r"\bactive\s+((?:[\w'-]+\s*){1,4})", re.I)
_INACTIVE = re.compile(r"\b(?:in (?:complete |partial )?remission|cured|no evidence of (?:active )?disease|ned|"
                       r"(?:now )?(?:closed|healed|resolved)|"
                       r"disease[- ]free|no recurrence)\b", re.I)
_ENDS = re.compile(r"[,;:(]|\b(?:or|and|with|requiring|that|which|who|defined|as|including|e\.g|despite)\b", re.I)


def _condition(tail: str) -> list[str]:
    """The stems of the condition a qualifier is put before, up to where the criterion goes on."""
    return key_stems(_ENDS.split(tail, 1)[0])


def _severity(note: NoteText, criterion: str) -> State | None:
    m = _CRITERION_SEVERITY.search(criterion)
    if not m or not _leads(criterion, m) or not (stems := _condition(m.group(4))):
        return None
    low, high = m.group(1).lower(), (m.group(2) or m.group(1)).lower()
    wanted = set(_SEVERITY[_SEVERITY.index(low): _SEVERITY.index(high) + 1])
    if (i := _named(note, stems)) is None:
        return None
    for j, sentence in enumerate(note.sentences):
        if (cue := _near(sentence, _NOTE_SEVERITY, stems, reach=len(stems) + 2)) is not None:
            said = cue.group(1).lower()
            if said not in wanted and m.group(3):  # "severe or uncontrolled asthma": a mild one may be either
                uncontrolled = next((k for k, t in enumerate(note.sentences) if _near(t, _UNCONTROLLED, stems)), None)
                return State(True if uncontrolled is not None else None, f"The note calls it {said}"
                             f"{', and not controlled' if uncontrolled is not None else ''}.", uncontrolled or j)
            return State(said in wanted, f"The note calls it {said}.", j)
    return State(None, "The note names it without saying how severe it is.", i)


def _control(note: NoteText, criterion: str) -> State | None:
    m = _CRITERION_CONTROL.search(criterion)
    if not m or not _leads(criterion, m) or not (stems := _condition(m.group(1))):
        return None
    if (i := _named(note, stems)) is None:
        return None
    untreated = m.group(0).lower().startswith("untreated")
    for j, sentence in enumerate(note.sentences):
        if untreated and _near(sentence, _NOT_TREATED, stems, reach=14) is not None:
            return State(True, "The note says it has not been treated.", j)
        if _near(sentence, _TREATED if untreated else _CONTROLLED, stems, reach=6 if untreated else 4) is not None:
            return State(False, f"The note says it is {'treated' if untreated else 'controlled'}.", j)
        if _near(sentence, _UNCONTROLLED, stems) is not None:
            return State(True, "The note says it is not controlled.", j)
    return State(None, "The note names it without saying whether it is controlled.", i)


def _active(note: NoteText, criterion: str) -> State | None:
    m = _CRITERION_ACTIVE.search(criterion)
    if not m or not _leads(criterion, m) or not (stems := _condition(m.group(1))) or _named(note, stems) is None:
        return None
    quiet = None
    for j, sentence in enumerate(note.sentences):
        if not set(stems) <= set(_stems(sentence)):
            continue
        if _near(sentence, _INACTIVE, stems, reach=8) is None:
            return None  # named once without remission: the mention decides, as before
        quiet = quiet if quiet is not None else j
    return None if quiet is None else State(False, "The note says it is in remission or cured.", quiet)


# ---- smoking ------------------------------------------------------------------------------------------

_WANTS_CURRENT_SMOKER = re.compile(r"\b(?:current(?:ly)?|active|ongoing)\s+(?:cigarette\s+|tobacco\s+)?"
                                   r"(?:smok\w*|tobacco)|\bstill smok\w*|^\W*smokers?\W*$", re.I)
_WANTS_NON_SMOKER = re.compile(r"\bnon-?smok\w*|\b(?P<never>never)[- ]smok\w*|\bnot (?:a )?(?:current )?smoker", re.I)
_WANTS_FORMER_SMOKER = re.compile(r"\b(?:former|ex-?|past|previous)[\s-]*smok\w*|\bquit smoking\b", re.I)
_EVER_SMOKED = re.compile(r"(?:\b(?:current|active|smokers?)\s+(?:or|and/or|and)\s+(?:ex|former|previous|prior|past)\b|"
                          r"\b(?:ex|former|previous|prior|past)[\s-]*(?:smokers?\s+)?(?:or|and/or|and)\s+current)"
                          r"(?=[^.;]{0,30}smok)", re.I)
_NEVER_SMOKED = re.compile(r"\b(?:non-?smoker|never[- ]smoker|never smoked|lifelong non-?smoker|does not smoke|"
                           r"doesn't smoke|denies (?:any )?(?:smoking|tobacco))\b", re.I)
_SMOKING = re.compile(r"\b(?:smok\w*|tobacco|cigarettes?|pack[- ]years?)\b", re.I)
_QUIT = re.compile(r"\b(?:quit|quitted|former|ex-?smoker|stopped|gave up|no longer|used to|previously smoked|"
                   r"remote (?:smoking|tobacco))\b", re.I)
_SMOKES = re.compile(r"\b(?:smokes|current(?:ly)? smok\w*|active smoker|still smok\w*|is a smoker|continues to smoke|"
                     r"has smoked|have smoked|ongoing (?:smoking|tobacco)|(?:\d+|a|one|two) (?:packs?|cigarettes?)"
                     r"(?: of cigarettes)? (?:(?:per|a|/|each) day|daily))\b", re.I)


def _smoking(note: NoteText, criterion: str) -> State | None:
    """"Current smokers", "former smokers", "current or former smokers" against what the note says of smoking."""
    if ever := _EVER_SMOKED.search(criterion):
        asked = [("ever", ever)]
    else:
        non = _WANTS_NON_SMOKER.search(criterion)
        asked = [(w, m) for w, m in (("current", _WANTS_CURRENT_SMOKER.search(criterion)),
                                     ("former", _WANTS_FORMER_SMOKER.search(criterion)),
                                     ("never" if non and non.group("never") else "non", non)) if m]
    if len(asked) != 1 or not _leads(criterion, asked[0][1]):
        return None
    wants = asked[0][0]
    for i, sentence in enumerate(note.sentences):
        if _NEVER_SMOKED.search(sentence):
            return State(wants in ("non", "never"), "The note says the patient does not smoke.", i)
        if not _SMOKING.search(sentence):
            continue
        if _QUIT.search(sentence):
            return State(wants in ("former", "ever", "non"), "The note says the patient quit smoking.", i)
        if _SMOKES.search(sentence):
            return State(wants in ("current", "ever"), "The note says the patient smokes.", i)
    return None


# ---- a gene's alteration ------------------------------------------------------------------------------

_GENE = r"(EGFR|ALK|ROS-?1|BRAF|K-?RAS|N-?RAS|H-?RAS|BRCA-?[12]?|FLT3|IDH-?[12]?|JAK-?2|PIK3CA|MET|RET|NTRK[123]?|" \
        r"HER-?2|ERBB2|TP53|NPM1|KIT|PDGFRA|FGFR[1-4]?|BCR-ABL1?|CALR|MPL|PALB2|ATM|CHEK2)"
_ALTERED = (r"(?:mutations?|mutated|mutant|alterations?|altered|variants?|fusions?|rearrangements?|rearranged|"
            r"amplifications?|amplified|deletions?|insertions?|positive|\+|exon\s+\d+|(?-i:[A-Z]\d{1,4}[A-Z])|ITD|TKD)")
_CRITERION_GENE = re.compile(rf"\b{_GENE}(?:[\s-]+(?:gene|activating|sensiti[sz]ing|driver|oncogenic|germline|somatic|"
                             rf"pathogenic|likely pathogenic|deleterious)){{0,2}}[\s-]*"
                             rf"(?:(?-i:[A-Z]\d{{1,4}})\s+)?{_ALTERED}(?!\w)|"  # "BRAF V600 mutation": a codon
                             rf"\b(?:activating|sensiti[sz]ing)?\s*(?:mutations?|alterations?|"
                             rf"rearrangements?|fusions?) (?:in|of) (?:the )?{_GENE}\b", re.I)
# "no HER2-directed treatment": a drug named after the gene, not the tumour's result
_NOT_A_DRUG = r"(?![\s-]*(?:directed|targeted|targeting|inhibitors?|TKIs?|therap\w*|tx|agents?|blockade))"
_NOTE_WILD = re.compile(rf"\b{_GENE}[\s-]*(?:gene\s+)?(?:(?-i:[A-Z]\d{{1,4}}[A-Z])\s+|(?:ITD|TKD)\s+)?"
                        rf"(?:wild[- ]?type|WT\b|neg\b|negative|"
                        rf"-(?!\w)|not (?:mutated|amplified|detected|found|identified)|undetected|unmutated)|"
                        rf"\b(?:no|negative for|without)\s+(?:\w+\s+){{0,3}}?"
                        rf"(?:[\w-]+\s*(?:,|/|\bor\b|\band\b|\bnor\b)\s*){{0,3}}{_GENE}\b{_NOT_A_DRUG}", re.I)
# "KRAS G12C inhibitor", "EGFR-targeted therapy": a drug, not the tumour's gene
_GENE_DRUG = re.compile(r"\b(?:inhibitors?|targeted|directed|TKIs?)\b", re.I)
_NOTE_ALTERED = re.compile(rf"\b{_GENE}(?:[\s-]+(?:gene|activating|sensiti[sz]ing)){{0,2}}[\s-]*{_ALTERED}(?!\w)|"
                           rf"\b(?:mutations?|alterations?|rearrangements?|fusions?) (?:in|of) (?:the )?{_GENE}\b",
                           re.I)


_CRITERION_WILD = re.compile(rf"\b{_GENE}[\s-]*(?:gene\s+)?(?:wild[- ]?type|non-?mutated|unmutated)|\bwithout (?:an? )?"
                             rf"(?:\w+\s+)?{_GENE}\s+(?:mutations?|alterations?)", re.I)


_VARIANT = re.compile(r"(?-i:[A-Z]\d{1,4}[A-Z])\b")


def _gene_key(name: str) -> str:
    return re.sub(r"[\s-]", "", name).upper().replace("ERBB2", "HER2")


_PENDING = re.compile(r"\b(?:pending|awaited|in process|sent off|not yet resulted)\b", re.I)
# a negative panel and the genes it lists: "Germline panel neg (incl BRCA1/2, PALB2)"
_NEGATIVE_PANEL = re.compile(r"\b(?:panel|testing|tests?|screen(?:ing)?|sequencing|NGS)\s+(?:was\s+|were\s+)?"
                             r"(?:neg|negative)\b[^.;]{0,60}", re.I)


def _gene(note: NoteText, criterion: str) -> State | None:
    wild = _CRITERION_WILD.search(criterion)
    m = wild or _CRITERION_GENE.search(criterion)
    if not m or _GENE_DRUG.search(criterion):
        return None
    gene = _gene_key(m.group(1) or m.group(2))
    for i, sentence in enumerate(note.sentences):
        if (pending := _PENDING.search(sentence)) and gene in {
                _gene_key(g.group(1)) for g in re.finditer(rf"\b{_GENE}", sentence[: pending.start()][-60:], re.I)}:
            return State(None, f"The note says the test for {gene} is pending.", i)
        for panel in _NEGATIVE_PANEL.finditer(sentence):
            listed = {_gene_key(g.group(1)) for g in re.finditer(rf"\b{_GENE}", panel.group(0), re.I)}
            listed |= {_gene_key(g.group(1) + n) for g in re.finditer(r"\b([A-Z]+)-?\d/(\d)\b", panel.group(0))
                       for n in g.group(2)}  # "BRCA1/2"
            if gene in listed:
                return State(bool(wild), f"The note reports a negative test that includes {gene}.", i)
        for w in _NOTE_WILD.finditer(sentence):  # "no ALK or ROS1 rearrangement": each gene it lists
            if gene in {_gene_key(g.group(1)) for g in re.finditer(rf"\b{_GENE}", w.group(0), re.I)}:
                return State(bool(wild), f"The note reports {gene} without an alteration.", i)
        for a in _NOTE_ALTERED.finditer(sentence):
            if _gene_key(a.group(1) or a.group(2)) == gene:
                asked, said = _VARIANT.search(m.group(0)), _VARIANT.search(a.group(0))
                if not wild and asked and said and asked.group(0) != said.group(0):
                    return State(False, f"The note reports {gene} {said.group(0)}, not {asked.group(0)}.", i)
                return State(not wild, f"The note reports an alteration of {gene}.", i)
    return None


_MSI_HIGH = re.compile(r"\b(?:MSI-?H(?:igh)?|microsatellite instability[- ]high|dMMR|"
                       r"mismatch repair[- ]deficien\w*|"
                       r"high microsatellite instability)\b", re.I)
_MSI_STABLE = re.compile(r"\b(?:MSS|MSI-?(?:L(?:ow)?|stable)|microsatellite[- ]stable|pMMR|"
                         r"mismatch repair[- ]proficient|proficient mismatch repair|MMR[- ]proficient|"
                         r"intact mismatch repair)\b", re.I)


def _microsatellites(note: NoteText, criterion: str) -> State | None:
    if not _MSI_HIGH.search(criterion):
        return None
    for i, sentence in enumerate(note.sentences):
        if _MSI_STABLE.search(sentence):
            return State(False, "The note reports a microsatellite-stable (mismatch-repair proficient) tumour.", i)
        if _MSI_HIGH.search(sentence):
            return State(True, "The note reports a microsatellite-unstable (mismatch-repair deficient) tumour.", i)
    return None


_GENOTYPE = re.compile(r"\bgenotypes?\s+(\d)([a-e]?)\b", re.I)


def _genotype(note: NoteText, criterion: str) -> State | None:
    """"HCV genotype 1" against "genotype 3a": a virus's genotype, number against number."""
    asked = {m.group(1) for m in _GENOTYPE.finditer(criterion)}
    if not asked:
        return None
    for i, sentence in enumerate(note.sentences):
        if m := _GENOTYPE.search(sentence):
            return State(m.group(1) in asked, f"The note reports genotype {m.group(1)}{m.group(2)}.", i)
    return None


# ---- when: "stroke within the past 14 days" against "admitted 10 days ago with a stroke" ----------------------

_DAYS = {"day": 1, "week": 7, "wk": 7, "month": 30.4, "mo": 30.4, "year": 365.25, "yr": 365.25}
_N = rf"\d+|{NUMBER_WORD}"
# a criterion's window: "within the past 30 days", "in the last 6 months"
_SPAN = (rf"(?:in|within|during) (?:the )?(?:past |last |previous |preceding |prior )?(?P<n>{_N})\s*"
         r"(?P<unit>day|week|month|year)s?\b")
_CRITERION_WINDOW = re.compile(rf"^(?P<what>[^,;:]{{3,80}}?)\s+{_SPAN}", re.I)
_IN_PAST = re.compile(rf"\b(?:in|within|over|during) (?:the )?(?:past|last|previous) (?P<n>{_N}|a|an)?\s*"
                      r"(?P<unit>day|week|month|year)s?\b", re.I)  # at most that long ago
# a note's own shorthand too: "4 wks ago", "3 mos ago", "2 yrs ago"
_AGO = re.compile(rf"\b(?P<n>{_N}|a|an)\s*(?P<unit>day|week|wk|month|mo|year|yr)s?\s+ago\b", re.I)


_WITHIN = re.compile(rf"\b{_SPAN}", re.I)


def window_days(criterion: str) -> float | None:
    """The days a criterion's time window spans ("within the past 30 days", "in the last 6 months")."""
    m = _WITHIN.search(criterion)
    return _days(m.group("n"), m.group("unit")) if m else None


def dated_days(sentence: str) -> float | None:
    """How long ago a sentence dates what it reports ("a flare 3 weeks ago, treated with …"), when it gives
    one date only."""
    dates = list(_AGO.finditer(sentence))
    return _days(dates[0].group("n"), dates[0].group("unit")) if len(dates) == 1 else None


def _days(n: str, unit: str) -> float:
    n = n.lower()
    count = int(n) if n.isdigit() else 1 if n in ("a", "an") else NUMBER_WORDS[n]
    return count * _DAYS[unit.lower()]


def _event(m: re.Match[str] | None) -> list[str]:
    """The stems of what a time limit bounds ("Stroke" in "Stroke within 6 months"); none for another's ("other
    carcinomas within 5 years") or for two things at once ("not treated with X, or treated for more than…")."""
    if not m or re.search(r"\b(?:other|or)\b", m.group("what"), re.I):
        return []
    stems = key_stems(m.group("what"))
    return stems if len(stems) <= 5 else []


def _affirmed(note: NoteText, sentence: int, stems: list[str]) -> bool:
    """Sentence `sentence` names all of `stems` as the patient's, not denied."""
    return any(c.sentence == sentence and not c.relative and set(stems) <= set(c.words)
               and min(c.words.index(w) for w in stems) < c.negated_from for c in note.clauses)


def _window(note: NoteText, criterion: str) -> State | None:
    """An event the criterion bounds in time, against how long ago the note says it happened."""
    m = _CRITERION_WINDOW.search(criterion)
    if not (stems := _event(m)) or m is None:
        return None
    limit = _days(m.group("n"), m.group("unit"))
    for i, sentence in enumerate(note.sentences):
        ago = _AGO.search(sentence) or _IN_PAST.search(sentence)
        if ago is None or not _affirmed(note, i, stems):
            continue
        since = _days(ago.group("n") or "1", ago.group("unit"))  # "in the past year"
        if ago.re is _IN_PAST and since > limit:
            return None  # "in the past 2 years" against a year: it may have been either side
        inside = since <= limit
        return State(inside, f"The note dates it {ago.group(0)}, {'inside' if inside else 'outside'} the "
                             f"criterion's {m.group('n')} {m.group('unit')}s.", i)
    return None


# how long: "type 1 diabetes for at least 1 year" against "diagnosed at age 9" (a 14-year-old) or "8 years ago"
_CRITERION_DURATION = re.compile(rf"^(?P<what>[^,;:]{{3,80}}?)\s+(?:diagnosed\s+|for\s+|of\s+|duration\s+(?:of\s+)?)?"
                                 rf"(?:at least|≥|>=|more than|over|greater than)\s*(?P<n>{_N})\s*"
                                 r"(?P<unit>day|week|month|year)s?\b", re.I)
_LASTED = re.compile(rf"\b(?P<n>{_N}|a|an)[- ](?P<unit>day|week|month|year)s?[- ](?:history|duration)\b|"
                     rf"\bfor (?:the (?:past|last) )?(?P<n2>{_N})\s*(?P<unit2>day|week|month|year)s?\b|"
                     rf"\bsince (?:the )?(?P<n3>{_N})\s*(?P<unit3>day|week|month|year)s?\b", re.I)
_AT_AGE = re.compile(r"\b(?:diagnosed|onset|began|started)\b[^.;]{0,30}\bat (?:the )?age (?:of )?(?P<age>\d{1,3})\b",
                     re.I)


def _how_long(note: NoteText, sentence: str) -> float | None:
    """Days the sentence says something has lasted: "8 years ago", "a 5-year history", "for 3 years", "diagnosed at
    age 9" (from the patient's age)."""
    if m := _AGO.search(sentence):
        return _days(m.group("n"), m.group("unit"))
    if m := _LASTED.search(sentence):
        n = m.group("n") or m.group("n2") or m.group("n3")
        unit = m.group("unit") or m.group("unit2") or m.group("unit3")
        return _days(n, unit)
    if (m := _AT_AGE.search(sentence)) and note.age is not None and int(m.group("age")) <= note.age[0]:
        return (note.age[0] - int(m.group("age"))) * _DAYS["year"]
    return None


def _duration(note: NoteText, criterion: str) -> State | None:
    """A condition the criterion asks to have lasted at least so long, against how long the note says it has."""
    m = _CRITERION_DURATION.search(criterion)
    if not (stems := _event(m)) or m is None:
        return None
    least = _days(m.group("n"), m.group("unit"))
    for i, sentence in enumerate(note.sentences):
        if not _affirmed(note, i, stems):
            continue
        lasted = _how_long(note, sentence)
        if lasted is None:
            continue
        return State(lasted >= least, f"The note says it has lasted about {lasted / _DAYS['year']:.1f} years; the "
                                      f"criterion asks at least {m.group('n')} {m.group('unit')}s.", i)
    return None


def state(note: NoteText, criterion: str) -> State | None:
    for read in (_gene, _microsatellites, _genotype, _smoking, _window, _duration, _control, _severity, _active):
        if (found := read(note, criterion)) is not None:
            return found
    return None
