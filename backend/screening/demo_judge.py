"""The demo model's criterion judgement: decide a trial criterion from the note's text alone, no model.

`judge(note, criterion, kind)` answers the natural question "is this criterion true of the patient?"
(yes / no / unknown / not_applicable, as the evaluator's wire format asks), with a short reason and the
note sentences it rests on. What it reads:

- ages against age limits, sex against sex limits (a pregnancy criterion does not apply to a man; a
  negative pregnancy test or a past pregnancy is not a current one; a woman the note calls postmenopausal
  is not asked for a pregnancy test or contraception; `backend.screening.demographics`);
- values the note states against the criterion's limits: stage, ECOG, a few labs and vital signs
  (`backend.screening.measures`);
- the state the note gives what it names: severity, control, remission, smoking, a gene's variant, a time
  window (`backend.screening.qualifiers`);
- treatments, by drug and by class, given before or taken now; a planned one is neither;
- contraception the note names, against a criterion that asks for it;
- consent and willingness ("able to give informed consent", "willing to comply") hold for a patient
  being screened: nothing in a note says otherwise;
- a condition, treatment or finding named in the criterion: present in the note, denied ("no history
  of…", "denies…", "negative for…"), or not mentioned. A family member's condition is not the patient's;
  a negated inclusion under a section heading ("Chemotherapy: No prior chemotherapy") is read as negated;
- a measurement or lab threshold the note does not report is unknown.

What a missing mention means follows how the TrialGPT annotators read notes: an exclusion criterion the
note does not show does not apply (the patient is not excluded by what the note never says), and an
inclusion criterion the note does not show is unknown: a screener would have to ask.
"""

from __future__ import annotations

import re
from dataclasses import replace

from backend.screening.demographics import judge_age, judge_sex
from backend.screening.judged import Answer, Judged
from backend.screening.measures import AT_LEAST, AT_MOST, DRINK_LIMIT, compare, meets
from backend.screening.note_reader import (
    ANTICANCER,
    CHEMOTHERAPY,
    CONCEPT_TOKENS,
    MARKER_STATUS,
    RADIOTHERAPY,
    WORD,
    NoteText,
    Therapy,
    fold,
    key_stems,
    norm,
    read_note,
    treatments_named,
)
from backend.screening.qualifiers import dated_days, state, window_days

# ---- consent, measurements, mentions ----------------------------------------------------------------

_CONSENT = re.compile(r"\b(?:consent|assent|willing\w*|agree\w*|comply|complian\w*|cooperat\w*|voluntar\w*|"
                      r"(?:able|ability) to (?:understand|take|swallow|undergo|tolerate|"
                      r"read|attend|follow|return|participate|give|provide|sign)|capable of (?:giving|providing|"
                      r"understanding|performing|completing|participating|following|complying)|sign\w* (?:the |an )?"
                      r"inform\w*|follow[- ]up visits?|study visits?|available for)\b", re.I)
_MEASURE = re.compile(r"\b(?:within (?:the )?|(?:in|during) the )(?:last |past |previous |preceding )?\d+\s*"
                      r"(?:hours?|days?|weeks?|months?|years?)|"
                      r"\b(?:within|in|during) the (?:last|past|previous|preceding) "
                      r"(?:days?|weeks?|months?|years?|decade)\b|"
                      r"\d+\s*(?:or more|or less|or fewer|or greater)\b|"
                      r"(?:[<>≤≥=]|\b(?:greater|less|more|higher|lower|fewer|above|below|exceed\w*|at least|"
                      r"no more than|within|times|x)\b)\s*\d|\d\s*(?:%|mg|g/|mmol|µ|u/l|iu|ml|mm|cm|kg|"
                      r"x\s*10|/mm|/µl|/ul|/l\b|uln|times)|\b(?:uln|upper limit of normal|score|grade|stage|"
                      r"class|clearance|count|level|concentration|index|fev1|saturation|ejection fraction|"
                      r"bmi|body mass|hba1c|inr|qtc?)\b", re.I)
_TIME_WINDOW = re.compile(r"\b(?:within|in|during|over) (?:the )?(?:last |past |previous |preceding )?(?:\d+\s*)?"
                          r"(?:hours?|days?|weeks?|months?|years?|decade)\b|\b\d+\s*(?:hours?|days?|weeks?|months?|years?)\b",
                          re.I)
_ALLERGY = re.compile(r"\b(?:hypersensitiv\w*|allerg\w*|intoleran\w*|anaphyla\w*|contraindicat\w*)", re.I)
# a note that says the patient cannot consent, and a criterion that lets someone else consent for them
_CANNOT_CONSENT = re.compile(r"\b(?:lacks?|lacking|without|no|not have(?: the)?|impaired) (?:the )?"
                             r"(?:decision[- ]making )?capacity\b|"
                             r"\b(?:unable|not able|cannot|can't|incapable of|not capable of) (?:to )?"
                             r"(?:give |giving |provide |providing |sign |signing )?(?:informed )?consent", re.I)
_ASKS_CONSENT = re.compile(r"\b(?:consent|understand|comprehend)", re.I)
_PROXY = re.compile(r"\b(?:representative|guardian|parent|proxy|surrogate|legally|next of kin|caregiver)", re.I)
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
# Modifiers that share the noun after the last of them: "alcohol or drug abuse", "acute or chronic leukemia",
# "renal, hepatic or cardiac failure". A modifier alone names nothing ("his primary care physician").
_MODIFIER = (r"(?:acute|chronic|primary|secondary|metastatic|recurrent|relapsed|refractory|active|latent|severe|mild|"
             r"moderate|uncontrolled|unstable|malignant|benign|autoimmune|alcohol|drug|substance|tobacco|opioid|"
             r"[a-z]{3,}(?:al|ic|ous|ary|ory|ive))")
_HEAD_NOUN = (r"(?:disease|disorder|tumou?rs?|cancers?|failure|infections?|injury|abuse|dependence|insufficiency|"
              r"impairment|illness|conditions?|syndrome|metastas[ie]s|lesions?|ha?emorrhage|thrombosis|carcinoma|"
              r"leuka?emia|lymphoma|neoplasms?|hepatitis|pneumonia|ulcers?|use)")
_SHARED_NOUN = re.compile(rf"\b((?:{_MODIFIER}\s*,\s*)*{_MODIFIER}\s*,?\s+(?:or|and/or|and)\s+){_MODIFIER}\s+"
                          rf"((?:[a-z]+\s+)?{_HEAD_NOUN}(?:\s+(?:[a-z]|\d{{1,2}}|[ivx]{{1,4}})\b)?|(?!{_MODIFIER}\b)[a-z]+)\b",
                          re.I)  # "hepatitis B", "type 2": a letter or number after the noun is part of its name
# What a criterion says would follow ("… disorder that would interfere with the evaluations") names nothing in it.
_CONSEQUENCE = re.compile(r"\b(?:that|which|who)\s+(?:would|could|might|may|will|is likely to|are likely to|"
                          r",?\s*in the (?:opinion|judge?ment))\b[^;]*", re.I)
# "other than relapsing-remitting MS", "except LCIS": what the criterion leaves out
_EXCEPT = re.compile(r"\b(?:other than|except(?:ing)?(?: for)?|excluding|apart from|besides)\s+([^,;.()]+)", re.I)


def _shared_noun(text: str) -> str:
    def spread(m: re.Match[str]) -> str:
        firsts = re.findall(rf"\b{_MODIFIER}\b", m.group(1), re.I)
        return " or ".join([*(f"{w} {m.group(2)}" for w in firsts), m.group(0)[len(m.group(1)):]])
    for _ in range(3):  # "refractory or relapsed acute or chronic leukemia": the inner pair first
        spread_text = _SHARED_NOUN.sub(spread, text)
        if spread_text == text:
            break
        text = spread_text
    return text


# A class adjective alone ("cerebral", "pulmonary", "psychiatric": of "cerebral disease" or a list's "renal,
# hepatic, …") names a disorder of that kind, which the note names with a word for one ("a psychiatric
# disorder", "renal failure"), not the organ ("the left cerebral hemisphere").
_CLASS_ADJECTIVE = re.compile(r"^(?:renal|hepatic|cardiac|(?:cardio|cerebro)?vascular|cerebral|pulmonary|respiratory|"
                              r"gastrointestinal|neurologic(?:al)?|psychiatric|psychological|mental|cognitive|"
                              r"endocrine|metabolic|ha?ematologic(?:al)?|immunologic(?:al)?|rheumatologic(?:al)?|"
                              r"dermatologic(?:al)?|ocular|ophthalmic|ophthalmologic(?:al)?|urologic(?:al)?|"
                              r"gyn(?:a)?ecologic(?:al)?|infectious|autoimmune|allergic|musculoskeletal|inflammatory|"
                              r"systemic|organic|thyroid|adrenal|pancreatic|biliary|intestinal|hepatobiliary)$")
_DISORDER = "@disorder"
_DISORDER_STEMS = tuple(dict.fromkeys(norm(w) for w in (
    "disease diseases disorder disorders illness condition dysfunction problem problems abnormality abnormalities "
    "impairment insufficiency failure injury infection infections cancer carcinoma tumor tumour syndrome damage "
    "involvement").split()))


def _alternatives(text: str) -> list[list[str]]:
    text = _shared_noun(_EXCEPT.sub(" ", _CONSEQUENCE.sub(" ", text)))
    # "mucosa-associated lymphoid tissue (MALT) lymphoma" is one thing, and "MALT" another name of it
    text = " / ".join([_ABBREVIATION.sub(" ", text), *(m.group(1) for m in _ABBREVIATION.finditer(text))])
    text = _EXAMPLES.sub(" ", text)  # "Visceral (liver or lung) metastases" are visceral metastases
    parts = re.split(r"\bor\b|,|/|;|\band/or\b|\(|\)", fold(text), flags=re.I)
    out = []
    for part in parts:
        stems = key_stems(part)
        if not stems or set(stems) <= _SCALES:
            continue
        if len(stems) == 1 and any(norm(w) == stems[0] and _CLASS_ADJECTIVE.match(w.lower())
                                   for w in WORD.findall(part)):
            stems = [*stems, _DISORDER]
        out.append(stems)
    return out


# a scale's name alone, its class letters dropped ("Child-Pugh B or C"), names no finding
_SCALES = frozenset(key_stems("Child-Pugh NYHA ECOG Karnofsky KPS Rutherford Fontaine GOLD score scores class"))


_ABBREVIATION = re.compile(r"\s\(((?-i:[A-Z][A-Za-z0-9-]{1,7}))\)(?=\s+\w)")
_EXAMPLES = re.compile(r"\s\((?-i:[a-z][a-z ,/-]{2,40})\)(?=\s+\w)")
_TOPIC = re.compile(r"^[A-Za-z][A-Za-z /&,()'-]{1,40}:\s+(?=\S)")
_PERMITS = re.compile(r"\b(?:(?:is|are)?\s*(?:allowed|permitted)|not specified)\W*$", re.I)
_TREATMENT_FOR = re.compile(r"\b(?:(?:treatment|therapy|therapies|regimens?)\s+(?:for|of)|treated\s+for)\b", re.I)
_OTHER = re.compile(r"\b(?:other|another|second|additional)\b", re.I)  # "No other malignancy": not the one studied
_FRAGMENT = re.compile(r"^(?:\([^()]*\)|(?:for|in|of|with|to|and|or)\s+\S+(?:\s+\S+)?)\W*$")
_OTHER_FIRST = re.compile(r"^\W*(?:[\w-]+\s+){0,3}(?:other(?!\s+than)|another|second(?![\s-]+or\b|-)|additional)\b",
                          re.I)
# "Hepatomegaly is not required for enrolment": a note on the criteria, no requirement
_NOT_REQUIRED = re.compile(r"^[^;]{0,160}\b(?:is|are)\s+not\s+(?:required|necessary|needed|mandatory)\b"
                           r"(?![^;]*\b(?:but|however|must|should)\b)[^;]*$", re.I)
# "Failure to reach an HbA1c below 7%": the limit is a target the patient missed, not the patient's value
_MISSED_TARGET = re.compile(r"\b(?:inability|unable|fail(?:ure|ed|s)?|not able)\s+to\s+(?:\w+\s+){0,2}"
                            r"(?:attain|achieve|reach|maintain|get)\b", re.I)
# "hepatitis B infection" is "hepatitis B", and a note's "no opportunistic infections" does not deny "HIV infection"
_KIND_WORDS = frozenset({"infection", "infect"})


def _need(exception: list[str], named: list[str]) -> int:
    """Stems of an exception the note must hold: a word less when it adds two or more to what the criterion
    names ("sleep disorder other than obstructive sleep apnea" against "sleep apnea")."""
    return len(exception) - 1 if len(set(exception) - set(named)) >= 2 else len(exception)


def _mentioned(note: NoteText, text: str, partial: bool = True) -> tuple[str, list[int]] | None:
    """('present'|'absent', sentences) when the note names one of the criterion's alternatives; `partial`
    lets a long alternative match with one of its words missing."""
    present: list[int] = []
    absent: list[int] = []
    left_out = [a for m in _EXCEPT.finditer(text) for a in _alternatives(m.group(1))]
    for alternative in _alternatives(text)[:12]:
        named = [w for w in alternative if w not in _KIND_WORDS]
        if named and all(w in CONCEPT_TOKENS for w in named):
            alternative = named
        if len(alternative) > 6 or any(w.startswith("non") and w not in note.stems for w in alternative):
            continue  # "non-small cell" is not "small cell" with a word missing
        need = len(alternative) - 1 if partial and len(alternative) >= 3 else len(alternative)
        if _DISORDER in alternative:
            hits = [h for stem in _DISORDER_STEMS if (h := note.mention([alternative[0], stem]))]
            hit = next((h for h in hits if h[0] == "present"), hits[0] if hits else None)
        else:
            hit = note.mention(alternative, need)
        if hit and hit[0] == "present" and any(
                set(alternative) <= set(a) and note.mention(a, _need(a, alternative)) == hit for a in left_out):
            continue  # what the note names is the kind the criterion leaves out ("MS other than relapsing MS")
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
_COUNT = re.compile(r"\b(?:no more than|not more than|at least(?! (?:one|1)\b)|at most|up to|a maximum of|fewer than|"
                    r"less than|more than)\s+"
                    r"(?:\d+|one|two|three|four|five)\b|[<>≤≥]\s*\d+\s+(?:prior|previous|lines?|regimens?)", re.I)
# a kind of treatment: (1) its qualifier, (2) the kind, (3) " for"/" of" when what it treated follows
_KIND = (r"(?:(systemic|anti-?cancer|cytotoxic|anti-?neoplastic)\s+)?(chemotherapy|chemo|radiotherapy|"
         r"radiation(?: therapy)?|therapy|treatment)\b(\s+(?:for|of)\b)?")
_PRIOR_KIND = re.compile(rf"\b(?:prior|previous|preceding|history of|received)\s+(?:or (?:current|concurrent)\s+)?"
                         rf"{_KIND}", re.I)
# a window's kind opens the criterion ("Chemotherapy within 4 weeks", "Any anticancer therapy within 21 days")
_KIND_FIRST = re.compile(rf"^\W*(?:any\s+)?{_KIND}", re.I)

_OTHER_INDICATION = re.compile(r"\b(?:arthritis|lupus|psoria\w*|crohn\w*|colitis|multiple sclerosis|vasculitis|"
                               r"myasthenia|nephrotic|transplant\w*|ectopic|sarcoidosis|dermatomyositis|"
                               r"(?:auto)?immune)\b", re.I)
_CANCER_WORD = re.compile(r"\b(?:cancer|carcinoma|lymphoma|leuk\w*|myeloma|melanoma|sarcoma|tumou?r|malignan\w*|"
                          r"metasta\w*|oncolog\w*|neoplas\w*|glioma|blastoma)", re.I)
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
    (r"\bhypomethylating\b|\bHMAs?\b", r"azacitidine|decitabine"),
    (r"\bKRAS[- ]?G12C inhibitors?\b", r"rasib$"),
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
    (r"\bintegrase (?:strand[- ]transfer )?inhibitors?\b|\bINSTIs?\b", r"tegravir$"),
    (r"\bNNRTIs?\b|\bnon-nucleoside reverse transcriptase", r"virenz$|virine$|nevirapine"),
    (r"\bbiologic(?:al)?s?\b(?! (?:sex|parents?|mother|father|age))", r"mab$|cept$|anakinra"),
    (r"\bantidepressants?\b|\banti-depressants?\b", r"pram$|oxetine$|traline$|faxine$|bupropion|mirtazapine|"
                                                      r"triptyline$|ipramine$"),
    (r"\btyrosine kinase inhibitors?\b|\bTKIs?\b", r"tinib$"),
    (r"\banti-?TNF\b|\bTNF(?:-?alpha)?[- ](?:inhibitors?|antagonists?|blockers?)\b",
     r"adalimumab|infliximab|etanercept|certolizumab|golimumab"),
    (r"\banti-?VEGF\b", r"bevacizumab|avastin|aflibercept|ranibizumab"),
    (r"\banti-?CD20\b|\bB[- ]cell[- ]depleti", r"rituximab|obinutuzumab|ofatumumab|ocrelizumab"),
    (r"\bdual antiplatelet|\bDAPT\b", r"aspirin|grel(?:or)?$"),
    (r"\bantiplatelets?\b|\banti-platelets?\b", r"aspirin|grel(?:or)?$|dipyridamole|cilostazol"),
    (r"\banticoagula", r"warfarin|xaban$|gatran$|parin$"),
    (r"\bstatins?\b", r"vastatin$"),
    (r"\bSSRIs?\b|\bselective serotonin reuptake", r"pram$|oxetine$|traline$"),
    (r"(?<!non-)\b(?:(?:gluco)?cortico)?steroids?\b|(?<!non-)\b(?:gluco)?corticoids?\b",
     r"sone$|olone$|steroid|corticoid"),
)]
_HAD = re.compile(r"\b(?:prior|previous(?:ly)?|received|history of|treated with|exposure to|exposed to|pre-?treated|"
                  r"progress\w* (?:on|after)|refractory to|failed|after|current(?:ly)?|taking|use of|"
                  r"(?:treatment|therapy) with|"
                  r"(?:inadequate|insufficient|lost|loss of) respon\w*|intoleran\w* (?:to|of))\b", re.I)
# the drugs of a regimen the note may name by its acronym
_REGIMENS = {"folfox": ("oxaliplatin", "fluorouracil", "leucovorin"), "capox": ("capecitabine", "oxaliplatin"),
             "xelox": ("capecitabine", "oxaliplatin"), "folfiri": ("irinotecan", "fluorouracil", "leucovorin"),
             "folfirinox": ("oxaliplatin", "irinotecan", "fluorouracil", "leucovorin"),
             "r-chop": ("rituximab", "cyclophosphamide", "doxorubicin", "vincristine", "prednisone"),
             "abvd": ("doxorubicin", "bleomycin", "vinblastine", "dacarbazine")}
# what a criterion says around a drug given before ("Prior treatment with oxaliplatin-based chemotherapy")
_HAD_WORDS = frozenset(key_stems("chemotherapy regimen regimens based containing refractory progression progressed "
                                 "failed received exposure exposed"))
_CLASS_NAIVE = re.compile(r"na[iï]ve\b", re.I)
# "prior or current", "treated with concurrent chemoradiation": either time counts
_EVER = re.compile(r"\b(?:prior|previous(?:ly)?|history|treated|received|completed|underwent)\b", re.I)
# what a criterion says around a drug taken now ("Receiving concomitant methotrexate"); any other word ("an
# insulin pump", "continuous insulin infusion") asks more than the drug
_TAKING_WORDS = frozenset(key_stems("receiving taking concomitant concurrent ongoing stable dose daily regular use"))
_ASKS_MORE = re.compile(r"\brequir\w*|\bneed\w*|\d\s*(?:mg|mcg|µg|g|iu|units?)\b", re.I)
_SYSTEMIC = re.compile(r"\b(?:oral|systemic|intravenous|iv|injectable|parenteral|intramuscular)\b", re.I)
_LOCAL = re.compile(r"\b(?:inhal\w*|topical\w*|creams?|ointments?|nasal|ics|eye drops?|intra-?articular)\b|"
                    r"fluticasone|mometasone|beclomethasone|ciclesonide", re.I)
_DUAL = re.compile(r"\bdual\b|\bDAPT\b", re.I)
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


# HER2 by immunohistochemistry: 3+ is positive, 0 and 1+ negative (2+ needs ISH, so it says neither)
_HER2_IHC = re.compile(r"\bHER-?2\b[\s:(]*(?:IHC\)?[\s:]*)?(3\+|[01]\+?)(?![\d+])", re.I)


def _marker_status(note: NoteText, text: str, negated: bool) -> Judged | None:
    """A criterion naming a tumour marker's status ("HER2-negative", "triple negative") against the status the
    note gives the same marker."""
    wanted = {(_marker(m.group(1)), m.group(2).lower()) for m in MARKER_STATUS.finditer(text)}
    if not wanted:
        return None
    for i, sentence in enumerate(note.sentences):
        said = [(m.group(0), _marker(m.group(1)), m.group(2).lower()) for m in MARKER_STATUS.finditer(sentence)]
        said += [(m.group(0), "HER2", "positive" if m.group(1) == "3+" else "negative")
                 for m in _HER2_IHC.finditer(sentence)]
        for shown, marker, status in said:
            for want_marker, want_status in wanted:
                if (stated := _stated(marker, status, want_marker, want_status)) is not None:
                    return Judged("yes" if (stated == want_status) != negated else "no",
                                  f"The note gives the patient's {shown} status.", [i])
    return None


def _treated_with_class(note: NoteText, text: str, negated: bool, *, window: bool = False) -> Judged | None:
    """A criterion about a class of drugs ("prior taxane", "no previous PD-1 inhibitor") against the drugs the
    note reports: only a member the note names decides; a note silent on the class leaves it open."""
    naive = bool(_CLASS_NAIVE.search(text))
    now = bool(_NOW.search(text)) and not naive and not _EVER.search(text)
    if not (naive or now or window or _HAD.search(text)) or _ALLOWED.search(text):
        return None  # the class alone ("steroid therapy") says nothing of the patient's having had it
    for named, members in _DRUG_CLASSES:
        before = text[: m.start()] if (m := named.search(text)) else ""
        if m and len(WORD.findall(before)) <= 10 and before.count("(") <= before.count(")"):  # not an aside
            had = [t for t in note.therapies
                   if members.search(t.name) or any(members.search(drug) for drug in _REGIMENS.get(t.name, ()))]
            if _SYSTEMIC.search(text):  # "oral corticosteroids": not an inhaled or topical one
                had = [t for t in had if not _LOCAL.search(t.name) and not _LOCAL.search(note.sentences[t.sentence])]
            elif _LOCAL.search(text):  # "inhaled corticosteroids": only one the note says is inhaled or topical
                had = [t for t in had if _LOCAL.search(t.name) or _LOCAL.search(note.sentences[t.sentence])]
            taking = [t for t in had if t.when == "current"]
            if _DUAL.search(text) and len({t.name for t in (taking if now else had)}) < 2:
                had = taking = []  # dual therapy is two of them
            if now and had and not taking:
                return Judged("yes" if negated else "no", f"The note reports {had[0].name} as a past treatment, "
                                                          "not a current one.", [had[0].sentence])
            if had := (taking if now else had):
                answer: Answer = "yes" if (not naive) != negated else "no"
                return Judged(answer, f"The note reports {had[0].name}, one of the drugs the criterion names.",
                              [had[0].sentence])
            return None
    return None


def _drug_given(note: NoteText, text: str, negated: bool, *, window: bool = False) -> Judged | None:
    """"Prior treatment with oxaliplatin": the drug itself, given at any time (a regimen counts its drugs)."""
    if not (window or _HAD.search(text)) or _NOW.search(text) or _ALLOWED.search(text) or _CLASS_NAIVE.search(text):
        return None
    asked = treatments_named(text)
    named = [t for t in note.therapies if asked & {t.name, *_REGIMENS.get(t.name, ())}]
    other = [w for w in key_stems(text) if w not in _HAD_WORDS and not any(a in w for a in asked)]
    if not named or other:
        return None
    return Judged("no" if negated else "yes", f"The note reports {named[0].name}.", [named[0].sentence])


def _drug_taken_now(note: NoteText, text: str, negated: bool) -> Judged | None:
    """"Current use of metformin": the drug itself, taken now or only before."""
    if not _NOW.search(text) or _EVER.search(text) or _ALLOWED.search(text):
        return None
    named = [t for t in note.therapies if re.search(rf"\b{re.escape(t.name)}\b", text, re.I)]
    drugs = {w for t in named for w in key_stems(t.name)} | {w for d in treatments_named(text) for w in key_stems(d)}
    if not named or [w for w in key_stems(text) if w not in _TAKING_WORDS and not any(d in w for d in drugs)]:
        return None
    taking = [t for t in named if t.when == "current"]
    pick = (taking or named)[0]
    return Judged("yes" if bool(taking) != negated else "no", f"The note reports {pick.name} as a "
                  f"{'current' if taking else 'past'} treatment.", [pick.sentence])


def _treated(note: NoteText, text: str, negated: bool) -> Judged | None:
    """A criterion about having been treated before, against the treatments the note reports."""
    if _MEASURE.search(text) and re.search(r"\bwithin\b|\d+\s*(?:days?|weeks?|months?)", text, re.I):
        # a time window: one taken now falls within any window, a past one when its sentence dates it inside
        # ("a flare 3 weeks ago, treated with prednisone"); unless the criterion asks more: a dose, or an
        # event that required it
        if _ASKS_MORE.search(text):
            return None
        limit = window_days(text)

        def inside(t: Therapy) -> bool:
            days = dated_days(note.sentences[t.sentence])
            return t.when == "current" or limit is not None and days is not None and days <= limit

        taking = replace(note, therapies=[t for t in note.therapies if inside(t)])
        found = (_treated_with_class(taking, text, negated, window=True)
                 or _drug_given(taking, text, negated, window=True)
                 or _treated_kind(taking, text, negated, window=True))
        return found if found is not None and found.evidence else None
    if _COUNT.search(text):
        return None  # "no more than 2 prior regimens": a count the note rarely gives
    return (_treated_with_class(note, text, negated) or _drug_given(note, text, negated)
            or _drug_taken_now(note, text, negated) or _treated_kind(note, text, negated))


def _treated_kind(note: NoteText, text: str, negated: bool, *, window: bool = False) -> Judged | None:
    """"Prior chemotherapy", "previously untreated", "prior radiotherapy to the pelvis": a kind of treatment."""
    wanted, holds = ANTICANCER, True
    if _NAIVE.search(text):
        holds = False
    else:
        m = _PRIOR_KIND.search(text) or (_KIND_FIRST.match(text) if window else None)
        if not m or m.group(2).lower() in ("therapy", "treatment") and not (m.group(1) or m.group(3)):
            return None  # "prior treatment" alone names nothing
        if m.group(3) and _OTHER.search(text[m.end():m.end() + 20]):
            return None  # "chemotherapy for another cancer": which one the note's was given for, it rarely says
        kind = m.group(2).lower()
        wanted = CHEMOTHERAPY if kind.startswith("chemo") else RADIOTHERAPY if kind.startswith("radi") else ANTICANCER
        if site := _SITE.match(text[m.end():]):  # "prior radiotherapy to the head or neck": there, not anywhere
            where = set(key_stems(site.group(1)))
            had = [t for t in note.therapies
                   if wanted.search(t.name) and where & set(key_stems(note.sentences[t.sentence]))]
            return Judged("yes" if holds != negated else "no", f"The note reports {had[0].name} there.",
                          [had[0].sentence]) if had else None
    # methotrexate for arthritis, rituximab for lupus: the drug, not an anticancer treatment (said in its
    # sentence, or in a note that names another indication and no cancer at all)
    whole = " ".join(note.sentences)
    other_only = bool(_OTHER_INDICATION.search(whole)) and not _CANCER_WORD.search(whole)
    had = [t for t in note.therapies if any(wanted.search(d) for d in (t.name, *_REGIMENS.get(t.name, ()))) and not (
        other_only or _OTHER_INDICATION.search(s := note.sentences[t.sentence]) and not _CANCER_WORD.search(s))]
    if not had:
        return None
    answer: Answer = "yes" if holds != negated else "no"
    return Judged(answer, f"The note reports earlier treatment ({had[0].name}).", [had[0].sentence])


# A daily dose limit ("prednisone > 20 mg/day", "a corticosteroid dose of at most 10 mg daily") against the dose the
# note gives beside the same drug ("prednisone 30 mg daily"); another drug "or equivalent" is not converted.
_DOSE_LIMIT = re.compile(rf"(?P<cmp>{AT_LEAST}|{AT_MOST})\s*(?P<n>\d+(?:\.\d+)?)\s*mg\b(?!\s*/\s*(?:d?l|ml|kg|m2)\b)"
                         r"\s*(?:/\s*d(?:ay)?\b|per day|daily|a day|/24\s*h)?", re.I)  # not "100 mg/dL", a lab
_PER_DAY = ((re.compile(r"\b(?:twice (?:a )?dai?ly|bid|b\.i\.d\.?|every 12 h(?:ours)?|q12h?)\b", re.I), 2),
            (re.compile(r"\b(?:three times (?:a )?daily|tid|t\.i\.d\.?|every 8 h(?:ours)?|q8h?)\b", re.I), 3),
            (re.compile(r"\b(?:daily|once (?:a )?daily|a day|per day|/day|qd|q\.d\.?|each morning|every morning|"
                        r"nightly|at bedtime|qhs)\b", re.I), 1))

_DOSE_AND_MORE = re.compile(r"\bstable\b|\bfor (?:at least |≥ ?)?\d+\s*(?:days?|weeks?|months?)\b", re.I)


def _dose(note: NoteText, text: str) -> Judged | None:
    limit = _DOSE_LIMIT.search(text)
    if limit is None or re.search(r"\b(?:per kg|/\s*kg|cumulative|total)\b", text, re.I):
        return None
    named = treatments_named(text)
    classes = [members for pattern, members in _DRUG_CLASSES if pattern.search(text)]
    for t in note.therapies:
        if t.when != "current" or not (t.name in named or not named and any(m.search(t.name) for m in classes)):
            continue
        sentence = note.sentences[t.sentence]
        said = re.search(rf"\b{re.escape(t.name)}\b\D{{0,15}}?(\d+(?:\.\d+)?)\s*mg\b(?P<how>[^.;,]{{0,30}})",
                         sentence, re.I)
        times = next((k for how, k in _PER_DAY if said and how.search(said.group("how"))), None)
        if said is None or times is None:
            continue
        daily = float(said.group(1)) * times
        holds = meets(daily, limit.group("cmp"), float(limit.group("n")))
        if holds and _DOSE_AND_MORE.search(text):
            return None  # the dose fits; how long it has been stable the note rarely says
        return Judged("yes" if holds else "no", f"The note gives {t.name} {daily:g} mg a day against the "
                                                f"criterion's {limit.group(0).strip()}.", [t.sentence])
    return None


# "Planned coronary revascularization within 3 months": something still to come, which a past one is not
_PLANNED_CRITERION = re.compile(r"^\s*(?:(?:patients?|subjects?|participants?)\s+(?:with|who have)\s+(?:an?\s+)?)?"
                                r"(?:planned|scheduled|anticipated|expected|elective|upcoming|intended)\s+"
                                r"(?!(?:life|survival|prognosis)\b)", re.I)  # not a prognosis ("expected survival")
_PLAN_CUE = re.compile(r"\b(?:planned|plan(?:s|ning)? (?:to|for)|scheduled|will undergo|will have|referred for|"
                       r"awaiting|to undergo|booked)\b", re.I)
_NO_PLAN = re.compile(r"\b(?:no|not|nor)\b[^.;]{0,40}\b(?:planned|scheduled)\b|\bno plans?\b", re.I)


def _planned(note: NoteText, text: str, kind: str | None) -> Judged:
    for alternative in _alternatives(text)[:12]:
        hit = note.mention(alternative)
        if hit and hit[0] == "present" and _PLAN_CUE.search(s := note.sentences[hit[1]]) and not _NO_PLAN.search(s):
            return Judged("yes", "The note says it is planned.", [hit[1]])
    if kind == "exclusion":
        return Judged("no", "The note plans no such thing; an exclusion the note does not show is taken not to "
                            "apply.", [])
    return Judged("unknown", "The note does not say it is planned.", [])


def judge(note: str, criterion: str, kind: str | None) -> Judged:
    """Is `criterion` true of the patient the note describes? `kind`: inclusion | exclusion | None."""
    text = " ".join(criterion.split())
    read = read_note(note)
    if not text or not read.sentences:
        return Judged("unknown", "There is no criterion or no note to check.", [])
    if read.language not in ("en", None):  # no silent "not mentioned" for a note the rules cannot read
        return Judged("unknown", "The note is not in English; the offline judge reads English notes only.", [])
    # "Patients who have received any of the following:" introduces its items; "(MBL, CLL and MCL group)" and
    # "for acromegaly" are pieces the parser left on their own lines
    if text.endswith(":") or _FRAGMENT.match(text):
        if kind == "exclusion":
            return Judged("no", "The criterion introduces other items or is a piece of one; on its own it rules "
                                "nothing out.", [])
        return Judged("unknown", "The criterion introduces other items or is a piece of one; on its own it asks "
                                 "nothing.", [])
    found = judge_age(read, text) or judge_sex(read, text, kind or "")
    if found is not None:
        return found
    if _CONSENT.search(text) or _UNRELIABLE.search(text):
        cannot = None if _PROXY.search(text) or not _ASKS_CONSENT.search(text) else next(
            (i for i, s in enumerate(read.sentences) if _CANNOT_CONSENT.search(s)), None)
        if cannot is not None:  # the note says the patient cannot consent, and no one may for them
            return Judged("yes" if kind == "exclusion" else "no", "The note says the patient cannot consent.",
                          [cannot])
        if kind == "exclusion":
            return Judged("no", "Nothing in the note says the patient cannot consent or take part.", [])
        return Judged("yes", "Consent, willingness and the ability to take part are assumed for a patient being "
                             "screened; the note says nothing against them.", [])
    if _NOT_REQUIRED.match(text):
        if kind == "exclusion":
            return Judged("no", "The criterion says what is not required; it rules nothing out.", [])
        return Judged("yes", "The criterion says what is not required; it asks nothing of the patient.", [])
    if planned := _PLANNED_CRITERION.match(text):
        return _planned(read, text[planned.end():], kind)
    negated = bool(_NEGATED_CRITERION.match(text)) and kind != "exclusion"  # "No X" under exclusions means X
    body = _NEGATED_CRITERION.sub("", text) if _NEGATED_CRITERION.match(text) else text
    if not negated and (dosed := _dose(read, body)) is not None:
        return dosed
    treated = _treated(read, body, negated) or _marker_status(read, body, negated)
    if treated is not None:
        return treated
    reading = None if _MISSED_TARGET.search(body) else compare(read.sentences, body)
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
    if MARKER_STATUS.search(body):  # "HER2-negative breast cancer": the status decides, not the disease's name
        if kind == "exclusion":
            return Judged("no", "The note does not give the status the criterion names; an exclusion the note does "
                                "not show is taken not to apply.", [])
        return Judged("unknown", "The note does not give the status the criterion names.", [])
    if kind != "exclusion" and _PERMITS.search(body):
        return Judged("yes", "The criterion permits it; it asks nothing of the patient.", [])
    # "No X" rules out as an exclusion does; "no prior treatment for X" is about the treatment, not X
    about_treatment = (kind == "exclusion" or negated) and _TREATMENT_FOR.search(body)
    # a treatment the note names only as planned, offered or never given is no mention of it ("oxaliplatin is planned")
    drugs = treatments_named(body) & read.treatments
    planned_only = bool(drugs) and not drugs & {t.name for t in read.therapies}
    partial = kind != "exclusion" and not negated
    # the parser's topic before an item ("Renal: on stable hemodialysis", "DISEASE CHARACTERISTICS: …") names nothing
    hit = None if about_treatment or planned_only else _mentioned(read, _TOPIC.sub("", body, count=1), partial=partial)
    measured = bool(_MEASURE.search(body) or DRINK_LIMIT.search(body))  # "more than 2 drinks a day": an amount
    if (kind == "exclusion" or negated) and _ALLERGY.search(body) and not _ALLERGY.search(" ".join(read.sentences)):
        return Judged("yes" if negated else "no", "The note reports no allergy or intolerance.", [])
    if hit is not None and hit[0] == "present" and (negated or kind == "exclusion") and _OTHER_FIRST.search(body):
        return Judged("unknown", "The note names it, but the criterion rules out another one besides the patient's.",
                      hit[1])
    if hit is not None and hit[0] == "present" and not measured:
        answer: Answer = "no" if negated else "yes"
        return Judged(answer, "The note mentions "
                              f"{'what the criterion rules out' if negated else 'what the criterion names'}.", hit[1])
    if hit is not None and hit[0] == "absent":  # denied in the note
        return Judged("yes" if negated else "no", "The note explicitly rules it out.", hit[1])
    if measured:
        if negated and hit is None and not _MEASURE.search(_TIME_WINDOW.sub(" ", body)):
            return Judged("yes", "The note never names what the criterion rules out, in any period.", [])
        if kind == "exclusion":
            return Judged("no", "The criterion needs a measurement the note does not report; an exclusion the "
                                "note does not show is taken not to apply.", [])
        return Judged("unknown", "The criterion needs a measurement the note does not report.", [])
    if kind == "exclusion" or negated:
        answer = "yes" if negated else "no"
        return Judged(answer, "The note does not mention it; a condition the note never shows is taken as "
                              "absent.", [])
    return Judged("unknown", "The note does not mention what the criterion asks about.", [])
