"""Reading a clinical note without a model: its sentences, the patient's age and sex, and whether a
condition is mentioned, denied ("no history of…", "denies…", "negative for…") or not mentioned at all.

`NoteText` is built once per note (`read_note` caches it) and answers many criteria cheaply: each
sentence is split into clauses and stemmed once. The demo judge (`backend.screening.demo_judge`) and the
local INGEST rules (`backend.screening.ingest`) read notes through it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from backend.screening.whereabouts import note_language

# ---- sentences --------------------------------------------------------------------------------------

_NUMBERED = re.compile(r"^\s*(\d{1,3})\.\s+(.*)$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\[(])")
_ABBREVIATIONS = re.compile(r"\b(?:Dr|Mr|Mrs|Ms|vs|e\.g|i\.e|approx|St|No|Fig)\.$", re.I)


def split_sentences(note: str) -> list[str]:
    """The note's sentences, 0-based. A note already numbered ("0. …\\n1. …", as in the TrialGPT data)
    keeps its numbering; other text is split at sentence ends."""
    lines = [line for line in note.splitlines() if line.strip()]
    numbered = [_NUMBERED.match(line) for line in lines]
    if lines and all(numbered) and [int(m.group(1)) for m in numbered if m] == list(range(len(lines))):
        return [m.group(2).strip() for m in numbered if m]
    out: list[str] = []
    for line in lines:
        pending = ""
        for piece in _SENTENCE_END.split(line.strip()):
            pending = f"{pending} {piece}".strip() if pending else piece
            if not _ABBREVIATIONS.search(pending):
                out.append(pending)
                pending = ""
        if pending:
            out.append(pending)
    return out


# ---- words ------------------------------------------------------------------------------------------

def any_of(vocabulary: str) -> str:
    """A regex group matching any of the whitespace-separated words or phrases ("_" is a space inside a
    phrase; an entry may be a regex fragment such as "seizures?"), longest first so a phrase wins over its
    first word. Vocabularies stay word lists, not hand-written alternations."""
    entries = sorted({w.replace("_", " ") for w in vocabulary.split()}, key=len, reverse=True)
    return "(?:" + "|".join(entries) + ")"


_SUFFIXES = ("izations", "ization", "ations", "ation", "ities", "ity", "ness", "ments", "ment", "ings", "ing",
             "ical", "ic", "ies", "ive", "ous", "ed", "es", "al", "s", "y", "e")


def strip_suffix(word: str, suffixes: tuple[str, ...], keep: int = 4) -> str:
    """The lowercased word without the first of `suffixes` it ends with, if `keep` letters remain."""
    word = word.lower()
    for suffix in suffixes:
        if word.endswith(suffix) and len(word) - len(suffix) >= keep:
            return word[: -len(suffix)]
    return word


def stem(word: str) -> str:
    """A crude stemmer: 'diabetic' and 'diabetes' → 'diabet'; enough to match words, not to read."""
    return strip_suffix(word, _SUFFIXES)


WORD = re.compile(r"[a-z0-9][a-z0-9'+-]*[a-z0-9+]|[a-z0-9]", re.I)
NUMBER_WORDS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine ten".split())}
NUMBER_WORD = "|".join(NUMBER_WORDS)  # a regex alternative

# Names notes and criteria give one thing, folded to one token before words are compared.
_CONCEPTS: dict[str, tuple[str, ...]] = {
    "myoinfarct": ("myocardial infarctions?", "heart attacks?", "mi", "stemi", "nstemi", "infarctions?"),
    "heartfail": ("congestive heart failure", "heart failure", "cardiac failure", "chf", "hfref", "hfpef"),
    "coronarydz": ("coronary artery disease", "coronary heart disease", "ischemic heart disease", "cad"),
    "copd": ("chronic obstructive pulmonary disease", "chronic obstructive lung disease", "emphysema"),
    "afib": ("atrial fibrillation", "afib", "a-fib", "a fib", "af"),
    "itp": ("immune thrombocytopeni(?:a|c purpura)", "idiopathic thrombocytopenic purpura", "itp"),
    "icd": ("implantable cardioverter[- ]defibrillators?", "implanted cardioverter[- ]defibrillators?", "icd"),
    "kidneydz": ("chronic kidney disease", "renal failure", "renal insufficiency", "kidney failure", "ckd",
                 "esrd", "kidney disease", "renal disease", "renal impairment", "kidney impairment"),
    "liverdz": ("liver disease", "hepatic disease", "hepatic impairment", "liver failure", "hepatic failure",
                "cirrhosis", "liver cirrhosis"),
    "diabetes1": (r"type (?:1|i) diabetes(?: mellitus)?", "t1dm", "t1d", "iddm", "juvenile diabetes"),
    "diabetes2": (r"type (?:2|ii) diabetes(?: mellitus)?", "t2dm", "t2d", "niddm"),
    "diabetes": ("diabetes mellitus", "diabetes", "diabetic", "dm"),
    "hypertension": ("hypertension", "hypertensive", "htn", "high blood pressure"),
    "stroke": ("cerebrovascular accidents?", "strokes?", "cva"),
    "tia": ("transient ischemic attacks?", "tia"),
    "dvt": ("deep vein thrombosis", "deep venous thrombosis", "dvt"),
    "pulmembol": ("pulmonary embol(?:ism|us|i)", "pe"),
    "dyspnea": ("shortness of breath", "short of breath", "sob", "dyspnea", "dyspnoea", "breathlessness",
                "difficulty breathing"),
    "hiv": ("human immunodeficiency virus", "hiv", "aids"),
    "hepb": ("hepatitis b(?: virus)?", "hep b", "hbv"),
    "hepc": ("hepatitis c(?: virus)?", "hep c", "hcv"),
    "uti": ("urinary tract infections?", "uti"),
    "cancer": ("cancers?", "carcinomas?", "malignanc(?:y|ies)", "neoplasms?", "tumou?rs?", "metastas[ie]s",
               "metastatic"),
    "smoking": ("smok(?:er|ers|ing|es)", "tobacco", "cigarettes?"),
    "alcohol": ("alcohol(?:ism|ic)?", "etoh"),
    "seizure": ("seizures?", "epilepsy", "epileptic", "convulsions?"),
    "pregnant": ("pregnan(?:t|cy|cies)",),
    "lupus": ("systemic lupus erythematosus", "lupus erythematosus", "lupus", "sle"),
    "fever": ("fevers?", "febrile", "pyrexia"),
    "obesity": ("obes(?:e|ity)", "overweight"),
    # a stage IV cancer has spread: "metastatic disease" holds of it (the stage's words are kept, see _token)
    "stage4": (r"stage (?:iv|4)[a-c]?"
               r"(?=[^.;]{0,40}\b(?:cancer|carcinoma|tumou?r|lymphoma|melanoma|sarcoma|\w+omas?)\b)",),
}
_CONCEPT = re.compile(r"\b(?:" + "|".join(sorted((f"(?P<{k}_{i}>{a})" for k, alts in _CONCEPTS.items()
                                                  for i, a in enumerate(alts)), key=len, reverse=True)) + r")\b",
                      re.I)


# "non-" that starts the name of a disease ("non-small cell lung cancer", "non-alcoholic fatty liver disease",
# "non-ST elevation myocardial infarction") names the disease, it does not deny it; "non-smoker" still denies.
_NAMED_NON = re.compile(r"\bnon-(?=[a-z0-9]+(?:[\s-]+[a-z0-9]+){0,3}?[\s-]+(?:cancer|carcinoma|tumou?rs?|disease|"
                        r"syndrome|infarction|diabetes|leuka?emia|\w+omas?|\w+itis|\w+osis|\w+pathy)\b)", re.I)


# A marker's status names a kind of the disease ("triple negative breast cancer", "HER2-negative"): it denies nothing.
# (An infection's "HIV negative" does deny it, so only tumour markers are read this way.)
MARKER_STATUS = re.compile(r"\b(HER-?2|ER|PR|HR|hormone[\s-]receptor|estrogen[\s-]receptor|progesterone[\s-]receptor|"
                           r"triple|EGFR|ALK|ROS-?1|KRAS|BRAF|BRCA-?[12]?|PD-?L-?1)[\s-]+(negative|positive)\b", re.I)
# An infection's or a test's result after its name ("HIV negative", "pregnancy test negative") denies it as
# "negative for HIV" does: the cue is read before what it denies.
_RESULT_AFTER = re.compile(r"\b((?:HIV|HBV|HCV|HPV|CMV|EBV|HBsAg|HBeAg|anti-HBc|anti-HCV|hepatitis\s+[ABC]|hep\s+[BC]|"
                           r"COVID(?:-19)?|SARS-CoV-2|"
                           r"tuberculosis|TB|syphilis|pregnancy|(?:beta[\s-]?|β-?)?hcg|quantiferon|PPD)"
                           r"(?:\s+(?:antibody|antibodies|antigen|Ab|Ag|serology|status|test(?:ing)?|screen(?:ing)?|"
                           r"PCR|RNA|DNA|viral load))?)[\s:-]+(?:negative|neg)\b(?!-)",
                           re.I)


_SHORTHAND = ((re.compile(r"\bdz\b", re.I), "disease"), (re.compile(r"\bGFD\b"), "gluten-free diet"),
              (re.compile(r"\bMDD\b"), "major depressive disorder"), (re.compile(r"\bh?GH\b"), "growth hormone"),
              (re.compile(r"\bOSA\b"), "obstructive sleep apnea"))


def reword(text: str) -> str:
    """The note's or criterion's text with what would mislead the negation cues reworded: names that read like
    a negation as one word no cue reads ("non-small cell lung cancer" as "nonsmall cell lung cancer", "triple
    negative" and "HER2-negative" as "triplenegative", "her2negative"), and a result after its name before it."""
    text = MARKER_STATUS.sub(lambda m: re.sub(r"[\s-]", "", m.group(1)) + m.group(2), text)
    text = _RESULT_AFTER.sub(r"negative for \1", text)
    for shorthand, spelled in _SHORTHAND:
        text = shorthand.sub(spelled, text)
    return _NAMED_NON.sub("non", text)


def _token(m: re.Match[str]) -> str:
    concept = (m.lastgroup or "").rsplit("_", 1)[0]
    if m.string[max(0, m.start() - 4): m.start()].lower() == "non-":
        return concept  # "non-smoker", "non-diabetic": one word of its own, neither the concept nor its denial
    if m.group(0).lower().startswith("metasta"):  # a cancer, and one that has spread: "no metastatic disease"
        return " cancer metastasis "
    if concept == "stage4":
        return f" {m.group(0)} metastasis "
    if concept in ("diabetes1", "diabetes2"):  # a kind of diabetes, and diabetes
        return f" diabetes {concept} "
    return f" {concept} "


def fold(text: str) -> str:
    """Text with every known name of a concept replaced by its token."""
    return _CONCEPT.sub(_token, reword(text))


CONCEPT_TOKENS = frozenset(_CONCEPTS)


def norm(word: str) -> str:
    w = re.sub(r"'s?$", "", word.lower())  # "Crohn's disease" names what "Crohn disease" (MeSH) does
    if "-" in w and not w[0].isdigit():  # "anti-depressants" is "antidepressants"; "18-year" stays apart
        w = w.replace("-", "")
    return w if w in _CONCEPTS else stem(w)


# Words a criterion uses around what it names: they name nothing themselves.
_GENERIC = frozenset(norm(w) for w in """
a an the of in on at to for with and or by from as is are be been being has have had any all other such
patient patients subject subjects participant participants individual individuals people person persons
history known prior previous previously documented diagnosis diagnosed diagnostic evidence presence present
clinical clinically confirmed established who which that this these those must should will would able
willing capable ability can may signed sign written study trial protocol its their his her disease
diseases disorder disorders condition conditions including include includes defined definition following
current currently active acute chronic significant severe mild moderate serious major minor recent
recently within past last months month weeks week years year days day time at least than more less
medical medically treatment treated therapy therapies use used using require requiring required need
based criteria criterion eligible enrolment enrollment entry screening visit investigator opinion
judgment judgement per due also not no without e g i e etc ie eg like type one two both either form forms kind kinds
symptom symptoms sign signs normal illness illnesses accompanied accompanying associated first second third
physician physicians doctor physician-diagnosed doctor-diagnosed well-defined well-documented meet meets meeting
dsm dsm-iv dsm-iv-tr dsm-5 dsm-v
suspected suspicion likely possible probable other new newly untreated uncontrolled stable
drug drugs medication medications medicine medicines agent agents product products procedure procedures
mri ct pet scan scans imaging radiologic radiological radiographic biopsy biopsies test tests testing assessed
positive negative result results finding findings sign signs function functions center centre site sites
""".split())  # the last lines: how a finding is shown ("by CT or MRI", "on biopsy"), not a finding


def key_stems(text: str) -> list[str]:
    """The stems of what a criterion names, in order, without the words around it."""
    words = [norm(w) for w in WORD.findall(fold(text)) if not w.isdigit()]
    return list(dict.fromkeys(w for w in words if w not in _GENERIC and len(w) >= 3 or w in ("hiv", "tia")))


NEGATION = re.compile(r"\b" + any_of("""no not denies denied denying without negative free_of absence_of absent never
ruled_out rules_out nor unremarkable non(?!-) none neither resolved lack_of lacks""") + r"\b|"
                      r"\b(?:does|do|did|is|was|are|were|has|have|had)n['’]t\b", re.I)
_CLAUSE_BREAK = re.compile(r";|:|\bbut\b|\bhowever\b|\balthough\b|\bthough\b|\bexcept\b|\bwhereas\b|"
                           r"\bwhich\b|\bwho\b|(?<!treated )(?<!managed )(?<!started )(?<!controlled )(?<!given )"
                           r"\bwith\b(?= (?!no\b))|"
                           # ", and" before a clause of its own: "HLA-B was negative, and G6PD activity was normal"
                           # ("denies fever, and chills" goes on denying)
                           r",\s+and\b(?=(?:\s+(?!and\b)[\w*:/+-]+){1,5}\s+(?:was|were|is|are|has|have|had|showed|shows|"
                           r"revealed|reveals|remains|remained)\b)", re.I)
RELATIVE = re.compile(r"\b" + any_of(r"""family_history famil(?:y|ial) mother father sister brother sibling
parents? son daughter aunt uncle grand\w* cousin wife husband relatives? fh""") + r"\b", re.I)


# ---- treatments: what the patient had (prior) or takes (current) -------------------------------------

# Drugs by their stems' endings (the INN stems: -mab, -tinib, -lutamide, -xaban, …), then names and kinds of treatment.
_THERAPY = re.compile(r"\b(\w+(?:mab|nib|lib|platin|taxel|rubicin|mustine|fosfamide|phosphamide|tecan|citabine|"
                      r"citidine|uracil|trexate|olimus|parib|ciclib|tinib|zumab|ximab|mumab|imod|lutamide|sone|olone|prine|purine|"
                      r"xaban|gatran|vastatin|sartan|olol|dipine|gliptin|glutide|gliflozin|parin|cillin|mycin|"
                      r"floxacin|cycline|conazole|prazole|nidazole|buvir|asvir|previr|gravir|navir|fovir|vudine|"
                      r"pram|oxetine|traline|faxine|dopa|zomib|lidomide|toclax|dilol|triptyline|ipramine|proate|"
                      r"azepine|trigine|iracetam|apine|idone|peridol|amate|virenz|virine|rasib|grel|grelor|renone|lactone|paratide|"
                      r"azepam|zolam|bazam|cosamide)|"
                      r"\w{3,}pril|" + any_of("""chemotherapy chemo radiation(?:_therapy)? radiotherapy xrt
immunotherapy chemoradi(?:ation|otherapy) surgery resection mastectomy lobectomy transplant(?:ation)? abiraterone
tamoxifen letrozole
anastrozole exemestane fulvestrant temozolomide avastin herceptin insulin metformin warfarin aspirin
(?:gluco)?(?:cortico)?steroids? (?:gluco)?corticoids?
dialysis hemodialysis etanercept abatacept aflibercept hydroxyurea folfox folfiri folfirinox capox xelox r-chop abvd
(?:peg)?interferon ribavirin levothyroxine lithium bupropion mirtazapine hydroxychloroquine mycophenolate
cyclosporine ciclosporin
androgen_deprivation(?:_therapy)? hormone_therapy endocrine_therapy""") + r")\b", re.I)
# Before a treatment's name: it was given and stopped; it is taken now; it was never given (or only planned:
# a planned therapy is not a prior one).
_PRIOR_CUE = re.compile(r"\b" + any_of(r"""s/p status_post after previously prior(?!_to) switched_from received
underwent treated_with completed progress\w*_(?:on|after|through|despite) failed history_of refractory_to relapsed_after
was_given had followed_by then""") + r"\b", re.I)
_CURRENT_CUE = re.compile(r"\b" + any_of(r"currently current now is_on on takes? taking uses using receiving "
                                           r"maintained_on started initiated began doubled increased (?:up)?titrated "
                                           r"switched_from_[\w-]+_to "
                                           "continues? medications?_include medications?_are home_meds "
                                           "home_medications?") + r"\b|\b(?:meds|medications):", re.I)
_CONTINUED = re.compile(r"[^.;]{0,40}?\b(?:which|that) (?:she|he|they|the patient) "
                        r"(?:continues|still takes|remains on)\b|"
                        r"\s*(?:is\s+)?(?:ongoing|continued)\b|[^.;()]{0,60}?\bsince\b|"
                        r"[^.;]{0,20}?\b(?:was|were|has been|have been) (?:added|started|initiated|increased|doubled|"
                        r"(?:up)?titrated)\b(?![^.;]*"
                        r"\b(?:stopped|discontinued|until)\b)", re.I)
_STOPPED_AFTER = re.compile(r"[^.;]{0,20}?\b(?:was|were|has been|had been)\s+"
                            r"(?:discontinued|stopped|held|switched)\b", re.I)
_DENIAL_RUNS_ON = re.compile(r"[\s,]*(?:,|or|nor)\s+(?:any\s+)?(?:other\s+)?(?:\w+\s+){0,2}", re.I)
_PLANNED_AFTER = re.compile(r"[^.;]{0,20}?\b(?:is|are|was|were)\s+(?:planned|scheduled|recommended|being considered|"
                            r"discussed|considered|proposed|deferred)\b|"
                            r"[^.;]{0,30}?(?<!\bnot )\bplanned\b|"
                            r"[^.;]{0,30}?\bto be (?:started|given|chosen|decided|considered|initiated)\b|"
                            r"[^.;]{0,40}?\b(?:not|never) (?:yet )?"
                            r"(?:started|given|initiated|begun|prescribed)\b|"
                            r"[^.;]{0,10}?\bwill be (?:started|given|initiated)\b", re.I)
_THERAPY_DENIED = re.compile(r"\b" + any_of(r"""no not never denies without naive na[iï]ve declined refused planned plan
prior_to
offered candidate_for will consider\w* recommended""") + r"\b[^.;]{0,30}$", re.I)
CHEMOTHERAPY = re.compile(r"chemo|platin|taxel|rubicin|mustine|fosfamide|phosphamide|tecan|citabine|citidine|uracil|"
                          r"trexate|temozolomide", re.I)
RADIOTHERAPY = re.compile(r"radiation|radiotherapy|xrt", re.I)
ANTICANCER = re.compile(rf"{CHEMOTHERAPY.pattern}|{RADIOTHERAPY.pattern}|mab$|nib$|immunotherapy|transplant|tamoxifen|"
                        r"letrozole|anastrozole|avastin|herceptin|zomib$|lidomide$", re.I)


def treatments_named(text: str) -> set[str]:
    """The treatments a text names, lowercased, as the note reader finds them."""
    return {m.group(1).lower() for m in _THERAPY.finditer(text)}


@dataclass(frozen=True)
class Therapy:
    name: str
    when: str  # "prior" | "current"
    sentence: int


def _therapies(sentences: list[str]) -> list[Therapy]:
    """Treatments the note says the patient had or takes; planned, offered or denied ones are left out
    (a planned therapy is not a prior one)."""
    out = []
    for i, sentence in enumerate(sentences):
        denied_end = -1
        for m in _THERAPY.finditer(sentence):
            before = sentence[: m.start()].rsplit(";", 1)[-1]
            # "not received docetaxel or any other chemotherapy": the denial runs on through "or"
            runs_on = denied_end >= 0 and _DENIAL_RUNS_ON.fullmatch(sentence[denied_end: m.start()])
            if _THERAPY_DENIED.search(before[-60:]) or runs_on or RELATIVE.search(before.rsplit(",", 1)[-1]):
                denied_end = m.end()
                continue  # denied or planned; or a relative's ("her husband takes warfarin")
            # The nearest cue decides ("previously on methotrexate, now on secukinumab"); none: taken as prior.
            prior = max((c.end() for c in _PRIOR_CUE.finditer(before)), default=-1)
            current = max((c.end() for c in _CURRENT_CUE.finditer(before)), default=-1)
            after = sentence[m.end():]
            if _PLANNED_AFTER.match(after):
                continue  # "adjuvant nivolumab is planned": not given yet
            if _CONTINUED.match(after):  # "methotrexate, which she continues"
                current = len(before)
            elif _STOPPED_AFTER.match(after):  # "haloperidol was discontinued"
                prior, current = len(before), -1
            out.append(Therapy(m.group(1).lower(), "current" if current > prior else "prior", i))
    return out


@dataclass(frozen=True)
class Clause:
    sentence: int
    words: tuple[str, ...]  # normalised stems, in order
    negated_from: int  # index of the first word after a negation cue (len(words) when none)
    relative: bool  # about a family member, not the patient


@dataclass
class NoteText:
    sentences: list[str]
    clauses: list[Clause] = field(default_factory=list)
    stems: frozenset[str] = frozenset()
    age: tuple[float, int] | None = None  # (years, sentence index)
    sex: tuple[str, int] | None = None  # ("female"|"male", sentence index)
    therapies: list[Therapy] = field(default_factory=list)
    language: str | None = None  # ISO 639-1; None when too short to tell
    treatments: frozenset[str] = frozenset()  # every treatment the note names, given, planned or denied

    def mention(self, wanted: list[str], need: int | None = None) -> tuple[str, int] | None:
        """('present'|'absent', sentence) for the first clause holding `need` of the wanted stems (all by
        default); a clause that holds them after a negation cue, or one of them just after it, reads
        'absent'. None: the note never names them together."""
        need = len(wanted) if need is None else need
        if not wanted or len(set(wanted) & self.stems) < need:
            return None
        absent: tuple[str, int] | None = None
        for clause in self.clauses:
            positions = [clause.words.index(w) for w in wanted if w in clause.words]
            if len(positions) < need or clause.relative:
                continue
            # after the cue, or one of them right after it ("MRI showed no metastases" denies brain metastases)
            if min(positions) >= clause.negated_from or any(0 <= p - clause.negated_from < 3 for p in positions):
                absent = absent or ("absent", clause.sentence)
                continue
            return "present", clause.sentence
        return absent


_AGE = (
    (re.compile(r"\b(\d{1,3})[- ]?(?:year|yr)s?[- ]?old\b", re.I), 1.0),
    (re.compile(r"\b(\d{1,3})\s*(?:yo|y/o|y\.o\.|yrs?|years?)\b(?!\s+(?:ago|history|prior|before|of\s+\w+ing))",
                re.I), 1.0),
    # not when something began ("dx age 11", "diagnosed at age 9", "since age 3")
    (re.compile(r"(?<!at )(?<!dx )(?<!since )(?<!onset )(?<!from )\bage[sd]?\s*(?:of\s*)?:?\s*(\d{1,3})\b", re.I),
     1.0),
    (re.compile(r"\b(\d{1,3})[- ]?(?:month)s?[- ]?old\b", re.I), 1 / 12),
    (re.compile(r"\b(\d{1,3})[- ]?(?:week)s?[- ]?old\b", re.I), 1 / 52),
    (re.compile(r"\b(\d{1,3})[- ]?(?:day)s?[- ]?old\b", re.I), 1 / 365),
    (re.compile(r"^\s*(?:[A-Z]{2,5}:\s*)?(?:a\s+|an\s+)?(\d{1,3})\s*(?:M|F|m|f)\b"), 1.0),  # "48 M with …", "HPI: 64M"
    (re.compile(r"\b(\d{1,3})\s*(?:M|F)\b(?=\s+(?:with|w/|who|presents|presenting|patient|pt|admitted|here))"), 1.0),
)
# An age before a sex letter: "58M", "58 yo M", "58-year-old F", or a bare "48 F" opening the sentence; not a
# temperature ("T 101 F", "101.5F").
_AGED = (r"(?:(?<![\d.°])\d{1,3}(?:[\s-]*(?:yo|y/o|y\.o\.|yrs?|years?[- ]old)[\s-]*)?|"
         r"^(?:[A-Z]{2,5}:\s*)?(?:an?\s+)?\d{1,3}\s+)")
_FEMALE = re.compile(rf"\b(?:woman|women|female|girl|lady|mrs|ms|she|her|herself|mother of|pregnant|"
                     rf"postmenopausal|premenopausal|{_AGED}F)\b", re.I)
_MALE = re.compile(rf"\b(?:man|men|male|boy|gentleman|mr|he|his|him|himself|{_AGED}M)\b", re.I)
_FEMALE_NOUN = re.compile(rf"\b(?:woman|female|girl|lady|{_AGED}F)\b", re.I)
_MALE_NOUN = re.compile(rf"\b(?:man|male|boy|gentleman|{_AGED}M)\b", re.I)


def _find_age(sentences: list[str]) -> tuple[float, int] | None:
    for i, sentence in enumerate(sentences[:6]):
        for pattern, scale in _AGE:
            m = pattern.search(sentence)
            if m and int(m.group(1)) <= 120:
                return round(int(m.group(1)) * scale, 3), i
    return None


def _find_sex(sentences: list[str]) -> tuple[str, int] | None:
    for female, male in ((_FEMALE_NOUN, _MALE_NOUN), (_FEMALE, _MALE)):
        for i, sentence in enumerate(sentences):
            text = re.sub(r"\b(?:his|her) (?:mother|father|wife|husband|son|daughter)\b", "", sentence, flags=re.I)
            f, m = bool(female.search(text)), bool(male.search(text))
            if f != m:
                return ("female" if f else "male"), i
    return None


def _clauses(index: int, sentence: str) -> list[Clause]:
    out: list[Clause] = []
    text = fold(sentence)
    start, after_with, relative = 0, False, False
    for brk in [*_CLAUSE_BREAK.finditer(text), None]:
        part = text[start: brk.start() if brk else len(text)]
        # "Her husband was diagnosed with colon cancer": what follows "with" is still the relative's
        relative = bool(RELATIVE.search(part)) or after_with and relative
        if raw := WORD.findall(part):
            words = tuple(norm(w) for w in raw)
            cue = NEGATION.search(part)
            negated_from = len(WORD.findall(part[: cue.start()])) + 1 if cue else len(words)
            out.append(Clause(index, words, negated_from, relative))
        if brk is None:
            break
        start, after_with = brk.end(), brk.group(0).lower() == "with"
    return out


@lru_cache(maxsize=32)  # one screening reads one note many times; a few notes at once
def read_note(note: str) -> NoteText:
    sentences = split_sentences(note)
    clauses = [c for i, s in enumerate(sentences) for c in _clauses(i, s)]
    stems = frozenset(w for c in clauses for w in c.words)
    return NoteText(sentences, clauses, stems, _find_age(sentences), _find_sex(sentences), _therapies(sentences),
                    note_language(" ".join(sentences)), frozenset(treatments_named(" ".join(sentences))))

