"""The demo model's criterion judgement: decide a trial criterion from the note's text alone, no model.

`judge(note, criterion, kind)` answers the natural question "is this criterion true of the patient?"
(yes / no / unknown / not_applicable, as the evaluator's wire format asks), with a short reason and the
note sentences it rests on. What it reads:

- ages against age limits, sex against sex limits (a pregnancy criterion does not apply to a man; a
  negative pregnancy test or a past pregnancy is not a current one; a woman the note calls postmenopausal
  is not asked for a pregnancy test or contraception);
- values the note states against the criterion's limits: stage, ECOG, a few labs and vital signs
  (`backend.screening.measures`);
- consent and willingness ("able to give informed consent", "willing to comply") hold for a patient
  being screened: nothing in a note says otherwise;
- a condition, treatment or finding named in the criterion: present in the note, denied ("no history
  of…", "denies…", "negative for…"), or not mentioned. A family member's condition is not the patient's;
- a measurement or lab threshold the note does not report is unknown.

What a missing mention means follows how the TrialGPT annotators read notes: an exclusion criterion the
note does not show does not apply (the patient is not excluded by what the note never says), and an
inclusion criterion the note does not show is unknown: a screener would have to ask.
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

from backend.screening.measures import AT_LEAST, AT_MOST, compare
from backend.screening.note_reader import (
    ANTICANCER,
    CHEMOTHERAPY,
    CONCEPT_TOKENS,
    MARKER_STATUS,
    RADIOTHERAPY,
    WORD,
    NoteText,
    fold,
    key_stems,
    read_note,
    treatments_named,
)
from backend.screening.qualifiers import state

Answer = Literal["yes", "no", "unknown", "not_applicable"]


class Judged(NamedTuple):
    answer: Answer
    reasoning: str
    evidence: list[int]


# ---- ages -------------------------------------------------------------------------------------------

_YEARS = r"(?:years?|yrs?|y\.?o\.?|year-old|years-old|y\b)(?:\s*old)?"
_AGE_NUMBER = re.compile(rf"(\d{{1,3}}(?:\.\d+)?)\s*(?:{_YEARS}|(?=\s*(?:-|to|and)\s*\d+(?:\.\d+)?\s*{_YEARS}))|"
                         rf"\bage[sd]?\W*(?:of|is|at|between|from|range)?\s*(?:{AT_LEAST}|{AT_MOST}|=|older than|"
                         rf"younger than)?\s*(\d{{1,3}}(?:\.\d+)?)",
                         re.I)
_LOW_CUE = re.compile(rf"(?:{AT_LEAST}|older than|minimum|from|between|aged|ages|age)\W*$", re.I)
_HIGH_CUE = re.compile(rf"(?:{AT_MOST}|younger than|maximum|no older than|not older than|to|and|-)\W*$", re.I)
_OLDER_AFTER = re.compile(rf"^\W*(?:{_YEARS}\W*)?(?:(?:or|and)\s+(?:older|over|above|more|greater)|\+)", re.I)
_YOUNGER_AFTER = re.compile(rf"^\W*(?:{_YEARS}\W*)?(?:or|and)\s+(?:younger|under|below|less)", re.I)


def age_bounds(text: str) -> tuple[float | None, float | None] | None:
    """(low, high) in years from an age criterion; None when it sets no age limit we can read. Only
    numbers that carry a unit of age ("18 years", "6 months") or follow the word age count."""
    t = text.lower().replace("≥", ">=").replace("≤", "<=").replace("–", "-").replace("—", "-")
    for unit, per_year in (("months?", 12), ("weeks?", 52)):
        def in_years(m: re.Match[str], d: int = per_year) -> str:
            return f"{float(m.group(1)) / d:.4f} years"
        t = re.sub(rf"(\d+(?:\.\d+)?)\s*(?:-|\s)?{unit}(?:\s*old)?\b", in_years, t)
    span = re.search(r"\bage[sd]?\b\W*(?:between|from|of|range)?\W*(\d{1,3}(?:\.\d+)?)\s*(?:years?)?\s*"
                     r"(?:-|to|and)\s*(\d{1,3}(?:\.\d+)?)\b(?!\s*%)", t)
    if span and float(span.group(1)) < float(span.group(2)):
        return float(span.group(1)), float(span.group(2))
    if re.search(r"<\s*\d+[^<>]*\bor\b[^<>]*>\s*\d+|>\s*\d+[^<>]*\bor\b[^<>]*<\s*\d+", t):
        return None  # "< 18 or > 90": outside a band
    low: float | None = None
    high: float | None = None
    for m in _AGE_NUMBER.finditer(t):
        value = float(m.group(1) or m.group(2))
        before, after = t[max(0, m.start() - 25): m.start()], t[m.end(): m.end() + 20]
        if (re.search(r"\b(?:within|past|last|previous|prior|for|since|ago|duration|history|lasting|during)\b",
                      before) and not re.search(r"\bage", before)) or \
                re.match(r"\s*(?:ago|prior|before|after|since|post|of (?:follow|treatment|disease|history))", after):
            continue  # a duration, not an age
        lead = t[m.start(): m.start(2)] if m.group(2) else ""  # "age < 65": the comparison is inside the match
        if _YOUNGER_AFTER.match(after) or re.search(rf"(?:{AT_MOST}|younger than)\W*$", lead):
            high = value
        elif re.search(rf"(?:{AT_LEAST}|older than)\W*$", lead):
            low = value
        elif _OLDER_AFTER.match(after) or (low is None and _LOW_CUE.search(before) and not _HIGH_CUE.search(before)):
            low = value
        elif _HIGH_CUE.search(before):
            high = value if low is not None or not re.search(r"\b(?:to|and|-)\W*$", before) else high
            if low is None and re.search(r"\b(?:to|and|-)\W*$", before):
                continue
        elif low is None:
            low = value  # "age 18" alone, or the first number of "18 - 65 years"
        else:
            high = value
    if low is not None and high is not None and low > high:
        return None  # "< 18 or > 90": outside a band, not a band
    if low is None and high is None:
        if re.fullmatch(r"\W*(?:adults?|adult patients?|aged? (?:over|above) 18)\W*", t):
            return 18.0, None
        return None
    return low, high


# A criterion that never speaks of age but of a period ("a doubling time of less than 6 months", "4 weeks
# must have passed") sets a duration, not an age limit.
_AGE_WORD = re.compile(r"\b(?:age[sd]?|old|older|younger|adults?|child(?:ren)?|y\.?o|year-old|years-old)\b", re.I)
_DURATION = re.compile(r"\b(?:period|time|interval|passed|elapsed|duration|expectancy|survival|follow|diagnos\w*|"
                       r"history|treat\w*|therap\w*|doubling|within|since|ago|prior|previous|last|past|months? of|"
                       r"weeks?|days?|hours?|dose|course|cycles?)\b", re.I)
# "under 18 or over 65 years": the limit is outside a band (an exclusion's usual form).
_NUM = r"(\d{1,3}(?:\.\d+)?)"
_OUTSIDE_BAND = re.compile(rf"(?:<|less than|under|younger than|below)\s*{_NUM}[^<>]*?\bor\b[^<>]*?"
                           rf"(?:>|greater than|more than|over|older than|above)\s*{_NUM}", re.I)
# Who a criterion is about, said around an age or sex limit ("of either sex and any race", "male subjects"):
# words that set no limit of their own.
_DEMOGRAPHIC = (r"sex|sexes|gender|genders|either|both|any|race|races|ethnic\w*|origin|registered|patients?|subjects?|"
                r"participants?")
# "25-40 years, or >= 65 years"; "18 to 60 years of age and over 60": alternatives, the patient fits any.
_AGE_ALTERNATIVE = re.compile(r"\bor\b(?=\s*(?:[<>]=?|≥|≤|aged?\b|\d))|\band\b(?=\s*(?:over|above|older than)\s*\d)",
                              re.I)


def _age(note: NoteText, criterion: str) -> Judged | None:
    if not _AGE_WORD.search(criterion) and _DURATION.search(criterion):
        return None
    band = _OUTSIDE_BAND.search(criterion.replace("≥", ">=").replace("≤", "<="))
    if band and float(band.group(1)) < float(band.group(2)):
        if note.age is None:
            return Judged("unknown", "The criterion sets an age limit and the note gives no age.", [])
        age, where = note.age
        outside = age < float(band.group(1)) or age > float(band.group(2))
        where_to = "outside" if outside else "within"
        return Judged("yes" if outside else "no",
                      f"The patient is {age:g}, {where_to} {band.group(1)}-{band.group(2)}.", [where])
    parts = [b for b in (age_bounds(p) for p in _AGE_ALTERNATIVE.split(criterion)) if b is not None]
    bounds = age_bounds(criterion) if len(parts) < 2 else parts[0]
    if bounds is None:
        return None
    rest = re.sub(r"\b(?:age[sd]?|years?|yrs?|old|older|younger|of|or|and|at|least|over|under|above|below|between|"
                  r"than|to|the|time|signing|informed|consent|form|screening|enrollment|enrolment|inclusion|"
                  r"male|female|males|females|men|women|adults?|children|must|be|is|are|who|with|in|a|an|greater|"
                  r"less|equal|more|up|from|inclusive|aged|months?|visit|day|study|entry|date|limits?|minimum|maximum|"
                  # boilerplate around an age limit ("Patient characteristics: Age: over 18", "< 75 years of
                  # age, but > 40")
                  rf"{_DEMOGRAPHIC}|characteristics|demographics?|but|protocol)\b|[\d\W_]+", " ", criterion.lower())
    if note.age is None:
        return Judged("unknown", "The criterion sets an age limit and the note gives no age.", [])
    age, where = note.age
    inside = any((low is None or age >= low) and (high is None or age <= high)
                 for low, high in (parts if len(parts) >= 2 else [bounds]))
    if not inside:
        return Judged("no", f"The patient is {age:g}, outside the age limit.", [where])
    wanted = _one_sex(criterion)
    if wanted and note.sex and note.sex[0] != wanted:  # "women aged 18-65" for a man: the age fits, the sex not
        return Judged("no", f"The criterion is about {wanted}s; the patient is {note.sex[0]}.", [note.sex[1]])
    if rest.split():
        return None  # the age fits; what else the criterion asks decides
    return Judged("yes", f"The patient is {age:g}, within the age limit.", [where])


# ---- sex and pregnancy ------------------------------------------------------------------------------

# The words that name one sex, in a criterion ("women aged 18-65", "male patients").
_WOMEN = r"females?|women|woman|girls?"
_MEN = r"males?|men|man|boys?"
_SEX_WORDS = re.compile(rf"\b(?:{_MEN}|{_WOMEN}|{_DEMOGRAPHIC}|and|or|all|only|of|postmenopausal|premenopausal|"
                        r"eligible|are|is|will|be|included|enrolled|accepted)\b", re.I)
# "both sexes", "either gender", "male or female": the criterion admits anyone, whatever the note says.
_EITHER_SEX = re.compile(r"\b(?:(?:both|either|all|any) (?:sexes|sex|genders?)|(?:males?|men) (?:and|or|and/or) "
                         r"(?:females?|women)|(?:females?|women) (?:and|or|and/or) (?:males?|men))\b", re.I)
_SEX_NAMED = (("female", re.compile(rf"\b(?:{_WOMEN}|postmenopausal|premenopausal)\b", re.I)),
              ("male", re.compile(rf"\b(?:{_MEN})\b", re.I)))

_FEMALE_ONLY = re.compile(r"\b(?:pregnan\w*|lactat\w*|breast[- ]?feed\w*|nursing (?:women|mothers|a baby)|"
                          r"childbearing|child-bearing|contracepti\w*|hcg|birth control)", re.I)
# A negative pregnancy test, pregnancies in the past ("an ectopic pregnancy at age 26", "a history of 3
# pregnancies") or the pregnancy the patient was born from are not a current pregnancy.
_NOT_PREGNANT_NOW = re.compile(r"\b(?:planning|plans?|desires?|wish\w*|wants?|considering)\s+(?:a\s+)?(?:future\s+)?"
                               r"pregnanc|\b(?:pregnancy test|hcg)\b[^.;]{0,80}\bnegative\b|\bnegative\b[^.;]{0,30}"
                               r"\b(?:pregnancy test|hcg)\b|\b(?:ectopic|prior|previous|past|former|earlier|last)"
                               r"\s+pregnanc|\bhistory of (?:\w+\s+){0,2}pregnanc|"
                               r"\bborn\b[^.;]*\bpregnanc|"
                               r"\bpregnanc\w*\s+(?:at age|in \d{4}|\d+ (?:years?|months?) ago)",
                               re.I)
# A woman the note calls postmenopausal (or whose uterus or ovaries were removed) cannot become pregnant; an
# inclusion asking for a negative test, no pregnancy or contraception then holds (stated only, not guessed
# from her age: the TrialGPT experts call that "not enough information").
_PAST_CHILDBEARING = re.compile(r"\b(?:post-?menopaus\w*|hysterectomy|(?:bilateral )?oophorectomy)\b", re.I)
# ("Women of childbearing potential" alone asks for fertility; with "must use contraception" it binds them.)
_NOT_PREGNANT_ASKED = re.compile(r"\bnegative\b|\b(?:not|non|no)\b[\w\s-]{0,20}(?:pregnan|lactat|breast)|contracep|"
                                 r"birth control", re.I)
_NO_CONTRACEPTION = re.compile(r"(?:\b(?:no|not|denies|without)\b|n't)[^.;]{0,30}(?:contracep|birth control)", re.I)
# what a criterion asks of contraception: that she use it ("must use highly effective contraception"), or excludes
# those who do not ("not using adequate contraception"); other mentions ("oral contraceptives" as a drug) neither
_USE_CONTRACEPTION = re.compile(r"\b(?:must|agrees?|agreed|willing|required|should|will)\b[^.;]{0,40}"
                                r"\b(?:use|practi[cs]e)\b[^.;]{0,50}(?:contracep|birth control)", re.I)
_NOT_USING_CONTRACEPTION = re.compile(r"\b(?:not|unwilling to|unable to|failure to|fail to|refus\w* to)\s+"
                                      r"(?:currently\s+|agreed? to\s+)?(?:using|use|practi[cs]ing|practi[cs]e|on)\b"
                                      r"[^.;]{0,50}"
                                      r"(?:contracep|birth control)", re.I)
# pregnancy as a time ("alcohol use during pregnancy"), not a state
_DURING_PREGNANCY = re.compile(r"\b(?:during|in|throughout) (?:the |her )?(?:current )?pregnancy\b")
# a method of contraception the note says the woman uses
_CONTRACEPTION = re.compile(r"\b(?:IUDs?|intrauterine (?:device|system)|"
                            r"contraceptive (?:implant|pill|injection|patch|ring)|"
                            r"(?:oral )?contraceptives?|contraception|birth control|depo-?provera|tubal ligation|"
                            r"etonogestrel|levonorgestrel|medroxyprogesterone|vasectomized partner)\b", re.I)
_MENOPAUSE = re.compile(r"\b(pre|post|peri)-?menopaus\w*", re.I)


def _one_sex(criterion: str) -> str | None:
    """The sex a criterion limits itself to, when it names exactly one ("women aged 18-65")."""
    if _EITHER_SEX.search(criterion) or _FEMALE_ONLY.search(criterion):
        return None  # a pregnancy or contraception clause is conditional ("women of childbearing potential must…")
    named = [sex for sex, pattern in _SEX_NAMED if pattern.search(criterion)]
    return named[0] if len(named) == 1 else None


def _sex(note: NoteText, criterion: str, kind: str) -> Judged | None:
    sex = note.sex
    lowered = criterion.lower()
    if _FEMALE_ONLY.search(_DURING_PREGNANCY.sub(" ", lowered)):
        if sex and sex[0] == "male":
            return Judged("not_applicable", "The criterion concerns women and the patient is male.", [sex[1]])
        pregnant = note.mention(["pregnant"])
        if pregnant and pregnant[0] == "present" and _NOT_PREGNANT_NOW.search(note.sentences[pregnant[1]]):
            pregnant = ("absent", pregnant[1])
        if re.search(r"\b(?:not|non|no)\b[\w\s-]{0,20}pregnan", lowered) and kind == "inclusion" and sex and not (
                pregnant and pregnant[0] == "present"):
            return Judged("yes", "The note does not describe a pregnancy.", [sex[1]])
        if pregnant and pregnant[0] == "present" and re.search(r"(?<!desire )(?<!planning )(?<!plan )pregnan",
                                                                 lowered):
            return Judged("yes", "The note says the patient is pregnant.", [pregnant[1]])
        if pregnant and pregnant[0] == "absent" and kind == "exclusion" and "pregnan" in lowered:
            return Judged("no", "The note shows the patient is not pregnant.", [pregnant[1]])
        if sex and re.search(r"\bpostmenopausal\b", lowered) and re.search(r"\bpostmenopausal\b",
                                                                           " ".join(note.sentences).lower()):
            return Judged("yes", "The note describes a postmenopausal woman.", [sex[1]])
        asks_not = _NOT_USING_CONTRACEPTION.search(lowered)
        if sex and (asks_not or _USE_CONTRACEPTION.search(lowered)):
            uses = next((i for i, t in enumerate(note.sentences)
                         if _CONTRACEPTION.search(t) and not _NO_CONTRACEPTION.search(t)), None)
            if uses is not None:
                return Judged("no" if asks_not else "yes", "The note says the patient uses contraception.", [uses])
        after = next((i for i, t in enumerate(note.sentences) if _PAST_CHILDBEARING.search(t)), None)
        if sex and after is not None:  # a pregnancy test or contraception binds only women who could conceive
            if kind == "exclusion" or _NOT_PREGNANT_ASKED.search(lowered):
                return Judged("no" if kind == "exclusion" else "yes",
                              "The note describes a woman past childbearing (postmenopausal).", [after])
        return Judged("unknown", "The note does not say whether the patient is pregnant, nursing or could "
                                 "become pregnant.", [])
    meno = _MENOPAUSE.search(lowered)
    if meno and len(lowered) < 40:
        if sex and sex[0] == "male":
            return Judged("not_applicable", "The criterion concerns women and the patient is male.", [sex[1]])
        if note.age is None or sex is None:
            return Judged("unknown", "The note does not say enough to tell the menopausal status.", [])
        age = note.age[0]
        post = age >= 55 or "postmenopausal" in " ".join(note.sentences).lower()
        pre = age < 45 and not post
        if not (post or pre):
            return Judged("unknown", "The patient's age does not settle the menopausal status.", [])
        holds = post if meno.group(1) == "post" else pre
        return Judged("yes" if holds else "no", f"A {age:g}-year-old woman is "
                                                f"{'postmenopausal' if post else 'premenopausal'}.", [note.age[1]])
    lowered = re.sub(r"^\s*\d+[.)]\s*", "", lowered)  # a list's own numbering ("3. Gender: …")
    if _SEX_WORDS.sub(" ", lowered).strip(" .,;:-()") or not re.search(
            rf"\b(?:{_MEN}|{_WOMEN})\b", lowered) and not _EITHER_SEX.search(lowered):
        return None
    if _EITHER_SEX.search(lowered):
        return Judged("yes", "The criterion admits either sex.", [sex[1]] if sex else [])
    if sex is None:
        return Judged("unknown", "The criterion concerns sex and the note does not state it.", [])
    wants_f = bool(re.search(rf"\b(?:{_WOMEN})\b", lowered))
    wants_m = bool(re.search(rf"\b(?:{_MEN})\b", lowered))
    if wants_f and wants_m:
        return Judged("yes", f"The criterion admits either sex; the patient is {sex[0]}.", [sex[1]])
    ok = (sex[0] == "female") == wants_f
    return Judged("yes" if ok else "no", f"The criterion is about {'women' if wants_f else 'men'}; the patient "
                                         f"is {sex[0]}.", [sex[1]])


# ---- consent, measurements, mentions ----------------------------------------------------------------

_CONSENT = re.compile(r"\b(?:consent|assent|willing\w*|agree\w*|comply|complian\w*|cooperat\w*|voluntar\w*|"
                      r"(?:able|ability) to (?:understand|take|swallow|undergo|tolerate|"
                      r"read|attend|follow|return|participate|give|provide|sign)|capable of (?:giving|providing|"
                      r"understanding|performing|completing|participating|following|complying)|sign\w* (?:the |an )?"
                      r"inform\w*|follow[- ]up visits?|study visits?|available for)\b", re.I)
_MEASURE = re.compile(r"\bwithin (?:the )?(?:last |past |previous |preceding )?\d+\s*(?:hours?|days?|weeks?|months?|"
                      r"years?)|\d+\s*(?:or more|or less|or fewer|or greater)\b|"
                      r"(?:[<>≤≥=]|\b(?:greater|less|more|higher|lower|fewer|above|below|exceed\w*|at least|"
                      r"no more than|within|times|x)\b)\s*\d|\d\s*(?:%|mg|g/|mmol|µ|u/l|iu|ml|mm|cm|kg|"
                      r"x\s*10|/mm|/µl|/ul|/l\b|uln|times)|\b(?:uln|upper limit of normal|score|grade|stage|"
                      r"class|clearance|count|level|concentration|index|fev1|saturation|ejection fraction|"
                      r"bmi|body mass|hba1c|inr|qtc?)\b", re.I)
_ALLERGY = re.compile(r"\b(?:hypersensitiv\w*|allerg\w*|intoleran\w*|anaphyla\w*|contraindicat\w*)", re.I)
_UNRELIABLE = re.compile(r"\b(?:unreliable|missing informed|no informed|participat\w* in (?:another|other|any)|"
                         r"enrolled in (?:another|other|any)|investigational (?:drug|agent|device|product))", re.I)
# A criterion that rules something out ("No X", "Patients who have not had X"), after a number and section
# headings ("Chemotherapy: No prior chemotherapy"); a count ("no more than 2") or "Not specified" rules out nothing.
_NEGATED_CRITERION = re.compile(r"^\s*(?:\d+[.)]\s*)?(?:[a-z][a-z/ -]{0,40}:\s+)*"
                                r"(?:(?:patients?|subjects?|participants?|individuals?|those)\s+"
                                r"(?:who|that)\s+)?(?:(?:must|should|have|has|had|did|does|do|are|is|was|were)\s+"
                                r"(?:not|never)"
                                r"(?:\s+been)?(?:\s+previously)?|no(?! more than| greater than| longer than)|"
                                r"not(?! specified| applicable)|without|absence of|free of|never|lack of|"
                                r"non(?!-)|none)\b\s*", re.I)
def _alternatives(text: str) -> list[list[str]]:
    # "mucosa-associated lymphoid tissue (MALT) lymphoma" is one thing, and "MALT" another name of it
    text = " / ".join([_ABBREVIATION.sub(" ", text), *(m.group(1) for m in _ABBREVIATION.finditer(text))])
    text = _EXAMPLES.sub(" ", text)  # "Visceral (liver or lung) metastases" are visceral metastases
    parts = re.split(r"\bor\b|,|/|;|\band/or\b|\(|\)", fold(text), flags=re.I)
    return [a for a in (key_stems(p) for p in parts) if a]


_ABBREVIATION = re.compile(r"\s\(((?-i:[A-Z][A-Za-z0-9-]{1,7}))\)(?=\s+\w)")
_EXAMPLES = re.compile(r"\s\((?-i:[a-z][a-z ,/-]{2,40})\)(?=\s+\w)")
_PERMITS = re.compile(r"\b(?:(?:is|are)?\s*(?:allowed|permitted)|not specified)\W*$", re.I)
_TREATMENT_FOR = re.compile(r"\b(?:treatment|therapy|therapies|regimens?)\s+(?:for|of)\b", re.I)
_OTHER = re.compile(r"\b(?:other|another|second|additional)\b", re.I)  # "No other malignancy": not the one studied
# "hepatitis B infection" is "hepatitis B" in a note that says only that
_KIND_WORDS = frozenset({"infection", "infect"})


def _mentioned(note: NoteText, text: str, partial: bool = True) -> tuple[str, list[int]] | None:
    """('present'|'absent', sentences) when the note names one of the criterion's alternatives; `partial`
    lets a long alternative match with one of its words missing."""
    present: list[int] = []
    absent: list[int] = []
    for alternative in _alternatives(text)[:12]:
        named = [w for w in alternative if w not in _KIND_WORDS or w in note.stems]
        if named and all(w in CONCEPT_TOKENS for w in named):
            alternative = named
        if len(alternative) > 6 or any(w.startswith("non") and w not in note.stems for w in alternative):
            continue  # "non-small cell" is not "small cell" with a word missing
        need = len(alternative) - 1 if partial and len(alternative) >= 3 else len(alternative)
        hit = note.mention(alternative, need)
        if hit:
            (present if hit[0] == "present" else absent).append(hit[1])
    if present:
        return "present", sorted(set(present))[:3]
    if absent:
        return "absent", sorted(set(absent))[:3]
    return None


# Treatment history: "newly diagnosed", "no prior chemotherapy", "prior systemic therapy for myeloma".
_NAIVE = re.compile(r"\b(?:newly diagnosed|previously untreated|treatment[- ]na[iï]ve|chemo(?:therapy)?[- ]na[iï]ve|"
                    r"therapy[- ]na[iï]ve)\b", re.I)
_SITE = re.compile(r"\s+to\s+(?:the\s+)?([a-z][a-z/ -]{2,40}?)"
                   r"(?=[,;.(]|\s+(?:for|with|that|which|resulting|unless)\b|$)", re.I)
_COUNT = re.compile(r"\b(?:no more than|not more than|at least|at most|up to|a maximum of|fewer than|less than|"
                    r"more than)\s+"
                    r"(?:\d+|one|two|three|four|five)\b|[<>≤≥]\s*\d+\s+(?:prior|previous|lines?|regimens?)", re.I)
_PRIOR_KIND = re.compile(r"\b(?:prior|previous|preceding|history of|received)\s+(?:or (?:current|concurrent)\s+)?"
                         r"(?:(systemic|anti-?cancer|cytotoxic|anti-?neoplastic)\s+)?(chemotherapy|chemo|radiotherapy|"
                         r"radiation(?: therapy)?|therapy|treatment)\b(\s+(?:for|of)\b)?", re.I)

# Classes of drugs a criterion names, and the names (or INN stems) of their members as the note reader finds them.
_DRUG_CLASSES = [(re.compile(named, re.I), re.compile(members, re.I)) for named, members in (
    (r"\btaxanes?\b", r"taxel"),
    (r"\bplatinum\b|\bplatin-based\b", r"platin"),
    (r"\banthracyclines?\b", r"rubicin"),
    (r"\bfluoropyrimidines?\b", r"uracil|capecitabine"),
    (r"\b(?:anti-?)?PD-?L?1\b|\bimmune checkpoint inhibitors?\b|\bcheckpoint inhibitors?\b",
     r"(?:pembro|nivo|atezo|durva|ave|cemip|ipili|tisle|dostar|toripa|sinti|camreli)\w*mab"),
    (r"\bCDK\s?4/6\b", r"ciclib"),
    (r"\bPARP\b", r"parib"),
    (r"\bproteasome inhibitors?\b", r"zomib$"),
    (r"\bimmunomodulatory (?:drugs?|agents?)\b|\bIMiDs?\b", r"lidomide$"),
    (r"\baromatase inhibitors?\b", r"letrozole|anastrozole|exemestane"),
    (r"\banti-?HER-?2\b|\bHER-?2[- ](?:targeted|directed)\b",
     r"trastuzumab|pertuzumab|herceptin|lapatinib|neratinib|tucatinib|margetuximab"),
    (r"\bBTK\b|\bbruton", r"brutinib$"),
    (r"\bBCL-?2\b", r"toclax$"),
    (r"\bSGLT-?2\b", r"gliflozin$"),
    (r"\bGLP-?1\b", r"glutide$|exenatide"),
    (r"\bDPP-?4\b", r"gliptin$"),
    (r"\bbeta[- ]?blockers?\b|\bβ-?blockers?\b", r"olol$|dilol$"),
    (r"\bACE inhibitors?\b|\bangiotensin[- ]converting", r"pril$"),
    (r"\bangiotensin (?:ii )?receptor blockers?\b|\bARBs?\b", r"sartan$"),
    (r"\bintegrase inhibitors?\b|\bINSTIs?\b", r"tegravir$"),
    (r"\bantidepressants?\b|\banti-depressants?\b", r"pram$|oxetine$|traline$|faxine$|bupropion|mirtazapine|"
                                                      r"triptyline$|ipramine$"),
    (r"\btyrosine kinase inhibitors?\b|\bTKIs?\b", r"tinib$"),
    (r"\banti-?TNF\b|\bTNF(?:-?alpha)?[- ](?:inhibitors?|antagonists?|blockers?)\b",
     r"adalimumab|infliximab|etanercept|certolizumab|golimumab"),
    (r"\banti-?VEGF\b", r"bevacizumab|avastin|aflibercept|ranibizumab"),
    (r"\banti-?CD20\b", r"rituximab|obinutuzumab|ofatumumab|ocrelizumab"),
    (r"\banticoagula", r"warfarin|xaban$|gatran$|parin$"),
    (r"\bstatins?\b", r"vastatin$"),
    (r"\bSSRIs?\b|\bselective serotonin reuptake", r"pram$|oxetine$|traline$"),
    (r"\b(?:cortico)?steroids?\b", r"sone$|olone$|steroid"),
)]
_HAD = re.compile(r"\b(?:prior|previous(?:ly)?|received|history of|treated with|exposure to|exposed to|pre-?treated|"
                  r"progress\w* (?:on|after)|refractory to|failed|after|current(?:ly)?|taking|use of)\b", re.I)
_CLASS_NAIVE = re.compile(r"na[iï]ve\b", re.I)
# "prior or current", "treated with concurrent chemoradiation": either time counts
_EVER = re.compile(r"\b(?:prior|previous(?:ly)?|history|treated|received|completed|underwent)\b", re.I)
# what a criterion says around a drug taken now ("Receiving concomitant methotrexate"); any other word ("an
# insulin pump", "continuous insulin infusion") asks more than the drug
_TAKING_WORDS = frozenset(key_stems("receiving taking concomitant concurrent ongoing stable dose daily regular"))
_ALLOWED = re.compile(r"\b(?:allowed|permitted|acceptable|either)\b", re.I)  # what a trial lets be, not asks
_NOW = re.compile(r"\b(?:current(?:ly)?|concurrent|concomitant|ongoing|taking|receiving|on (?:a )?stable)\b", re.I)


def _marker(name: str) -> str:
    """One spelling per tumour marker: "HER-2" and "her2" are HER2, "hormone receptor" is HR."""
    key = re.sub(r"[\s-]", "", name).upper()
    return {"HORMONERECEPTOR": "HR", "ESTROGENRECEPTOR": "ER", "PROGESTERONERECEPTOR": "PR"}.get(key, key)


_RECEPTORS = ("ER", "PR", "HER2", "HR")


def _stated(marker: str, status: str, wanted: str, wanted_status: str) -> str | None:
    """The status the note's `marker status` gives the `wanted` marker, if it gives one: "triple negative" (or
    positive) is each receptor's status, and one receptor positive contradicts "triple negative"."""
    if marker == wanted or (marker == "TRIPLE" and wanted in _RECEPTORS):
        return status
    if wanted == "TRIPLE" and wanted_status == "negative" and marker in _RECEPTORS and status == "positive":
        return "positive"
    return None


def _marker_status(note: NoteText, text: str, negated: bool) -> Judged | None:
    """A criterion naming a tumour marker's status ("HER2-negative", "triple negative") against the status the
    note gives the same marker."""
    wanted = {(_marker(m.group(1)), m.group(2).lower()) for m in MARKER_STATUS.finditer(text)}
    if not wanted:
        return None
    for i, sentence in enumerate(note.sentences):
        for m in MARKER_STATUS.finditer(sentence):
            marker, status = _marker(m.group(1)), m.group(2).lower()
            for want_marker, want_status in wanted:
                if (stated := _stated(marker, status, want_marker, want_status)) is not None:
                    return Judged("yes" if (stated == want_status) != negated else "no",
                                  f"The note gives the patient's {m.group(0)} status.", [i])
    return None


def _treated_with_class(note: NoteText, text: str, negated: bool) -> Judged | None:
    """A criterion about a class of drugs ("prior taxane", "no previous PD-1 inhibitor") against the drugs the
    note reports: only a member the note names decides; a note silent on the class leaves it open."""
    naive = bool(_CLASS_NAIVE.search(text))
    now = bool(_NOW.search(text)) and not naive and not _EVER.search(text)
    if not (naive or now or _HAD.search(text)) or _ALLOWED.search(text):
        return None  # the class alone ("steroid therapy") says nothing of the patient's having had it
    for named, members in _DRUG_CLASSES:
        if (m := named.search(text)) and len(WORD.findall(text[: m.start()])) <= 10:
            had = [t for t in note.therapies if members.search(t.name)]
            taking = [t for t in had if t.when == "current"]
            if now and had and not taking:
                return Judged("yes" if negated else "no", f"The note reports {had[0].name} as a past treatment, "
                                                          "not a current one.", [had[0].sentence])
            if had := (taking if now else had):
                answer: Answer = "yes" if (not naive) != negated else "no"
                return Judged(answer, f"The note reports {had[0].name}, one of the drugs the criterion names.",
                              [had[0].sentence])
            return None
    return None


def _treated(note: NoteText, text: str, negated: bool) -> Judged | None:
    """A criterion about having been treated before, against the treatments the note reports."""
    if _MEASURE.search(text) and re.search(r"\bwithin\b|\d+\s*(?:days?|weeks?|months?)", text, re.I):
        return None  # a time window: the note rarely dates a treatment
    if _COUNT.search(text):
        return None  # "no more than 2 prior regimens": a count the note rarely gives
    if (by_class := _treated_with_class(note, text, negated)) is not None:
        return by_class
    if _NOW.search(text) and not _EVER.search(text) and not _ALLOWED.search(text):
        # "Current use of metformin": the drug itself, taken now or only before
        named = [t for t in note.therapies if re.search(rf"\b{re.escape(t.name)}\b", text, re.I)]
        drugs = {w for t in named for w in key_stems(t.name)}
        if named and not [w for w in key_stems(text) if w not in drugs and w not in _TAKING_WORDS]:
            taking = [t for t in named if t.when == "current"]
            pick = (taking or named)[0]
            return Judged("yes" if bool(taking) != negated else "no", f"The note reports {pick.name} as a "
                          f"{'current' if taking else 'past'} treatment.", [pick.sentence])
    wanted, holds = ANTICANCER, True
    if _NAIVE.search(text):
        holds = False
    else:
        m = _PRIOR_KIND.search(text)
        if not m or m.group(2).lower() in ("therapy", "treatment") and not (m.group(1) or m.group(3)):
            return None  # "prior treatment" alone names nothing
        kind = m.group(2).lower()
        wanted = CHEMOTHERAPY if kind.startswith("chemo") else RADIOTHERAPY if kind.startswith("radi") else ANTICANCER
        if site := _SITE.match(text[m.end():]):  # "prior radiotherapy to the head or neck": there, not anywhere
            where = set(key_stems(site.group(1)))
            had = [t for t in note.therapies
                   if wanted.search(t.name) and where & set(key_stems(note.sentences[t.sentence]))]
            return Judged("yes" if holds != negated else "no", f"The note reports {had[0].name} there.",
                          [had[0].sentence]) if had else None
    had = [t for t in note.therapies if wanted.search(t.name)]
    if not had:
        return None
    answer: Answer = "yes" if holds != negated else "no"
    return Judged(answer, f"The note reports earlier treatment ({had[0].name}).", [had[0].sentence])


def judge(note: str, criterion: str, kind: str | None) -> Judged:
    """Is `criterion` true of the patient the note describes? `kind`: inclusion | exclusion | None."""
    text = " ".join(criterion.split())
    read = read_note(note)
    if not text or not read.sentences:
        return Judged("unknown", "There is no criterion or no note to check.", [])
    if read.language not in ("en", None):  # no silent "not mentioned" for a note the rules cannot read
        return Judged("unknown", "The note is not in English; the offline judge reads English notes only.", [])
    found = _age(read, text) or _sex(read, text, kind or "")
    if found is not None:
        return found
    if _CONSENT.search(text) or _UNRELIABLE.search(text):
        if kind == "exclusion":
            return Judged("no", "Nothing in the note says the patient cannot consent or take part.", [])
        return Judged("yes", "Consent, willingness and the ability to take part are assumed for a patient being "
                             "screened; the note says nothing against them.", [])
    negated = bool(_NEGATED_CRITERION.match(text)) and kind != "exclusion"  # "No X" under exclusions means X
    body = _NEGATED_CRITERION.sub("", text) if _NEGATED_CRITERION.match(text) else text
    treated = _treated(read, body, negated) or _marker_status(read, body, negated)
    if treated is not None:
        return treated
    reading = compare(read.sentences, body)
    if reading is not None:
        holds = (reading.place == "inside") != negated
        return Judged("yes" if holds else "no", f"The note states {reading.what}, "
                                                f"{reading.place} what the criterion asks.", [reading.sentence])
    said = state(read, body)
    if said is not None:
        evidence = [] if said.sentence is None else [said.sentence]
        if said.holds is None:  # named, its state unsaid: what the kind of criterion makes of silence
            if kind == "exclusion":
                return Judged("no", f"{said.reason} An exclusion the note does not show is taken not to apply.",
                              evidence)
            return Judged("unknown", said.reason, evidence)
        return Judged("yes" if said.holds != negated else "no", said.reason, evidence)
    if kind != "exclusion" and _PERMITS.search(body):
        return Judged("yes", "The criterion permits it; it asks nothing of the patient.", [])
    # "No X" rules out as an exclusion does; "no prior treatment for X" is about the treatment, not X
    about_treatment = (kind == "exclusion" or negated) and _TREATMENT_FOR.search(body)
    # a treatment the note names only as planned, offered or never given is no mention of it ("oxaliplatin is planned")
    drugs = treatments_named(body) & read.treatments
    planned_only = bool(drugs) and not drugs & {t.name for t in read.therapies}
    partial = kind != "exclusion" and not negated
    hit = None if about_treatment or planned_only else _mentioned(read, body, partial=partial)
    measured = bool(_MEASURE.search(body))
    if (kind == "exclusion" or negated) and _ALLERGY.search(body) and not _ALLERGY.search(" ".join(read.sentences)):
        return Judged("yes" if negated else "no", "The note reports no allergy or intolerance.", [])
    if hit is not None and hit[0] == "present" and negated and _OTHER.search(body):
        return Judged("unknown", "The note names it, but the criterion rules out another one besides the patient's.",
                      hit[1])
    if hit is not None and hit[0] == "present" and not measured:
        answer: Answer = "no" if negated else "yes"
        return Judged(answer, "The note mentions "
                              f"{'what the criterion rules out' if negated else 'what the criterion names'}.", hit[1])
    if hit is not None and hit[0] == "absent":  # denied in the note
        return Judged("yes" if negated else "no", "The note explicitly rules it out.", hit[1])
    if measured:
        if kind == "exclusion":
            return Judged("no", "The criterion needs a measurement the note does not report; an exclusion the "
                                "note does not show is taken not to apply.", [])
        return Judged("unknown", "The criterion needs a measurement the note does not report.", [])
    if kind == "exclusion" or negated:
        answer = "yes" if negated else "no"
        return Judged(answer, "The note does not mention it; a condition the note never shows is taken as "
                              "absent.", [])
    return Judged("unknown", "The note does not mention what the criterion asks about.", [])
