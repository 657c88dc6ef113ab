"""What the demo model knows of biomedical words: enough to turn common requests into good queries.

Each concept maps the user's phrasings to a condition/intervention for ClinicalTrials.gov and to a
PubMed clause (a MeSH heading with free-text synonyms). Words it doesn't know are passed through as
free text, never dropped or guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Concept:
    patterns: tuple[str, ...]  # regexes over the lower-cased request
    kind: str  # "condition" | "intervention" | "topic"
    label: str  # what goes into a trial search field
    pubmed: str  # a PubMed clause


# Drug classes → the names a trial registry lists (a small curated table; CT.gov indexes drugs by name).
CLASSES: dict[str, list[str]] = {
    "checkpoint inhibitor": ["pembrolizumab", "nivolumab", "atezolizumab", "durvalumab", "ipilimumab",
                             "cemiplimab"],
    "PD-1 inhibitor": ["pembrolizumab", "nivolumab", "cemiplimab", "dostarlimab"],
    "PD-L1 inhibitor": ["atezolizumab", "durvalumab", "avelumab"],
    "SGLT2 inhibitor": ["empagliflozin", "dapagliflozin", "canagliflozin"],
    "GLP-1 agonist": ["semaglutide", "liraglutide", "dulaglutide", "tirzepatide"],
    "statin": ["atorvastatin", "rosuvastatin", "simvastatin", "pravastatin"],
    "EGFR inhibitor": ["osimertinib", "erlotinib", "gefitinib", "afatinib"],
}



def _either(head: str, drug_class: str) -> str:
    """A PubMed clause: the class's heading or words, OR each drug of the class by name."""
    return "(" + " OR ".join([*([head] if head else []), *CLASSES[drug_class]]) + ")"


CONCEPTS: tuple[Concept, ...] = (
    Concept((r"\bnsclc\b", r"non[- ]small[- ]cell lung", r"\blung adenocarcinoma"),
            "condition", "non-small cell lung cancer",
            '("Carcinoma, Non-Small-Cell Lung"[MeSH] OR "non-small cell lung cancer" OR NSCLC)'),
    Concept((r"\blung cancer", r"\blung neoplasm"), "condition", "lung cancer",
            '("Lung Neoplasms"[MeSH] OR "lung cancer")'),
    Concept((r"\bmelanoma",), "condition", "melanoma", '("Melanoma"[MeSH] OR melanoma)'),
    Concept((r"\bbreast cancer", r"\bbreast neoplasm"), "condition", "breast cancer",
            '("Breast Neoplasms"[MeSH] OR "breast cancer")'),
    Concept((r"\bhead and neck", r"\bhnscc\b"), "condition", "head and neck cancer",
            '("Head and Neck Neoplasms"[MeSH] OR "head and neck cancer")'),
    Concept((r"\bdisc degeneration", r"\bdegenerative disc", r"\bintervertebral disc"), "condition",
            "degenerative disc disease",
            '("Intervertebral Disc Degeneration"[MeSH] OR "degenerative disc disease")'),
    Concept((r"\binterstitial lung",), "condition", "interstitial lung disease",
            '("Lung Diseases, Interstitial"[MeSH] OR "interstitial lung disease")'),
    Concept((r"\bphelan", r"\bshank3\b"), "condition", "Phelan-McDermid syndrome",
            '("Phelan-McDermid syndrome" OR SHANK3)'),
    Concept((r"\bcolorectal",), "condition", "colorectal cancer",
            '("Colorectal Neoplasms"[MeSH] OR "colorectal cancer")'),
    Concept((r"\bcolitis",), "condition", "colitis", '("Colitis"[MeSH] OR colitis)'),
    Concept((r"\bheart failure",), "condition", "heart failure", '("Heart Failure"[MeSH] OR "heart failure")'),
    Concept((r"\bdementia", r"\balzheimer"), "condition", "dementia", '("Dementia"[MeSH] OR dementia)'),
    Concept((r"\blong covid", r"\bpost-covid"), "condition", "long COVID",
            '("Post-Acute COVID-19 Syndrome"[MeSH] OR "long COVID" OR "post-COVID")'),
    Concept((r"\bcovid", r"\bsars-cov-2"), "condition", "COVID-19", '("COVID-19"[MeSH] OR COVID-19 OR SARS-CoV-2)'),
    Concept((r"\bchildren\b", r"\bpediatric", r"\bpaediatric", r"\bkids\b", r"\bchildhood\b"), "population",
            "children", '("Child"[MeSH] OR children OR pediatric)'),
    Concept((r"\bsmok", r"\btobacco"), "topic", "smoking", '("Smoking"[MeSH] OR smoking OR tobacco)'),
    Concept((r"\bmetformin",), "intervention", "metformin", '("Metformin"[MeSH] OR metformin)'),
    Concept((r"\bdiabet",), "condition", "diabetes", '("Diabetes Mellitus"[MeSH] OR diabetes)'),
    Concept((r"\bdepress",), "condition", "depression", '("Depression"[MeSH] OR depression)'),
    Concept((r"\bimmunotherap", r"\bcheckpoint inhibitor", r"\bimmune checkpoint", r"\bici\b", r"\bicis\b"),
            "intervention", " OR ".join(CLASSES["checkpoint inhibitor"]),
            '("Immune Checkpoint Inhibitors"[MeSH] OR "Immunotherapy"[MeSH] OR immunotherapy OR '
            '"checkpoint inhibitor" OR ' + " OR ".join(CLASSES["checkpoint inhibitor"][:4]) + ")"),
    Concept((r"\bpd-?1 (?:inhibitor|blockade|antibod)", r"\banti-pd-?1\b"), "intervention",
            " OR ".join(CLASSES["PD-1 inhibitor"]), _either('"PD-1"', "PD-1 inhibitor")),
    Concept((r"\bpd-?l1 (?:inhibitor|blockade|antibod)", r"\banti-pd-?l1\b"), "intervention",
            " OR ".join(CLASSES["PD-L1 inhibitor"]), _either('"PD-L1"', "PD-L1 inhibitor")),
    Concept((r"\bsglt-?2",), "intervention", " OR ".join(CLASSES["SGLT2 inhibitor"]),
            _either('"Sodium-Glucose Transporter 2 Inhibitors"[MeSH] OR SGLT2', "SGLT2 inhibitor")),
    Concept((r"\bglp-?1",), "intervention", " OR ".join(CLASSES["GLP-1 agonist"]),
            _either('"Glucagon-Like Peptide-1 Receptor Agonists"[MeSH] OR GLP-1', "GLP-1 agonist")),
    Concept((r"\bstatins?\b",), "intervention", " OR ".join(CLASSES["statin"]),
            '("Hydroxymethylglutaryl-CoA Reductase Inhibitors"[MeSH] OR statin OR statins)'),
    Concept((r"\begfr[- ]tki", r"\begfr (?:tyrosine )?kinase inhibitor"), "intervention",
            " OR ".join(CLASSES["EGFR inhibitor"]), _either("", "EGFR inhibitor")),
    Concept((r"\bcar[- ]?t\b", r"\bchimeric antigen receptor"), "intervention", "CAR-T",
            '("Receptors, Chimeric Antigen"[MeSH] OR "CAR-T" OR "chimeric antigen receptor")'),
    Concept((r"\bpembrolizumab", r"\bkeytruda"), "intervention", "pembrolizumab",
            '(pembrolizumab OR Keytruda)'),
    Concept((r"\bnivolumab", r"\bopdivo"), "intervention", "nivolumab", "(nivolumab OR Opdivo)"),
    Concept((r"\bosimertinib", r"\btagrisso"), "intervention", "osimertinib", "(osimertinib OR Tagrisso)"),
    Concept((r"\bchemotherap",), "intervention", "chemotherapy", '("Drug Therapy"[MeSH] OR chemotherapy)'),
    Concept((r"\bdigital therapeutic", r"\bmobile app", r"\bmhealth\b"), "intervention",
            "digital therapeutic", '("Telemedicine"[MeSH] OR "digital therapeutic" OR "mobile app")'),
    Concept((r"\begfr\b", r"epidermal growth factor receptor"), "topic", "EGFR",
            '(EGFR[MeSH] OR "epidermal growth factor receptor" OR EGFR)'),
    Concept((r"\bresist",), "topic", "resistance",
            '("Drug Resistance, Neoplasm"[MeSH] OR resistance OR resistant)'),
    Concept((r"\bkras\b",), "topic", "KRAS", "(KRAS OR \"Proto-Oncogene Proteins p21(ras)\"[MeSH])"),
    Concept((r"\bbrain metasta",), "topic", "brain metastases",
            '("Brain Neoplasms/secondary"[MeSH] OR "brain metastases")'),
)

_NUMBER = {"1": "1", "i": "1", "one": "1", "2": "2", "ii": "2", "two": "2", "3": "3", "iii": "3", "three": "3",
           "4": "4", "iv": "4", "four": "4"}
_PHASE_NUM = r"(?:iv|i{1,3}|[1-4]|one|two|three|four)"
_PHASE_RUN = re.compile(rf"\b(early\s+)?phases?\s*{_PHASE_NUM}\b"
                        rf"(?:\s*(?:/|-|,|or|and|to|&|\+)\s*(?:phase\s*)?{_PHASE_NUM}\b)*")
STATUS_WORDS: tuple[tuple[str, list[str]], ...] = (
    (r"not (?:yet )?recruiting|yet to (?:start|recruit)|upcoming", ["NOT_YET_RECRUITING"]),
    (r"active,? (?:but )?not recruiting", ["ACTIVE_NOT_RECRUITING"]),
    (r"recruiting|enrolling|open to enrol+ment|accepting patients|open for enrol+ment", ["RECRUITING"]),
    (r"completed|finished", ["COMPLETED"]),
    (r"terminated|stopped early", ["TERMINATED"]),
    (r"withdrawn", ["WITHDRAWN"]),
    (r"suspended", ["SUSPENDED"]),
    (r"active|ongoing|open|running", ["RECRUITING", "ACTIVE_NOT_RECRUITING"]),
)
SPONSORS = ("Pfizer", "Novartis", "AstraZeneca", "Merck", "MSD", "Roche", "Genentech", "Bristol-Myers Squibb", "BMS",
            "Eli Lilly", "Lilly", "GlaxoSmithKline", "GSK", "Sanofi", "Janssen", "Johnson & Johnson", "AbbVie",
            "Amgen", "Bayer", "Boehringer Ingelheim", "Novo Nordisk", "Gilead", "Regeneron", "Takeda",
            "National Cancer Institute", "NCI", "Moderna", "BeiGene", "Daiichi Sankyo", "Astellas")
PLACES = ("United States", "USA", "Canada", "Mexico", "Brazil", "Argentina", "United Kingdom", "UK", "England",
          "France", "Germany", "Italy", "Spain", "Portugal", "Netherlands", "Belgium", "Switzerland", "Austria",
          "Denmark", "Sweden", "Norway", "Finland", "Iceland", "Ireland", "Poland", "Greece", "Turkey", "Israel",
          "Egypt", "South Africa", "Nigeria", "Kenya", "India", "China", "Japan", "Korea", "Taiwan", "Singapore",
          "Australia", "New Zealand", "Boston", "New York", "Houston", "Chicago", "Los Angeles", "San Francisco",
          "Seattle", "Philadelphia", "London", "Paris", "Berlin", "Toronto", "Madrid", "Tokyo", "Beijing",
          "Shanghai", "Sydney", "Texas", "California", "Massachusetts", "Florida", "Europe")
STOPWORDS = set("""a an the and or of for in on to with about find search show me get give look looking want
need please some any all articles article papers paper literature studies study trials trial query queries
pubmed clinical that which who what are is be on new recent latest i we you can could would like build write
make help more suggest better this these those improve refine it its current search results result ones one
only just also too add my our table page pages app tool site website trialscout tablizer colleague""".split())


# The scaffolding of a question around its subject: auxiliaries, pronouns and wh-words ("how do I find…",
# "what does … say about…", "is there any evidence on…") and the prepositions between subjects are never what
# is searched for.
QUESTION_WORDS = set("""how what which where when why who whom whose do does did doing done is are was were be been
being am can could should would will shall might must has have had i me my mine we us our you your there here
anyone anybody anything something someone know known tell say says said kind kinds sort sorts evidence information
info learn read reading recommend recommended resources aware exist exists existing available published
written out join enrol enroll participate after before during
among against versus vs via""".split())
# In a wh-question ("how does X work for Y?", "how is X used in Y?", "how do X and Y compare?") the verb the
# auxiliary carries, before any preposition, is part of the frame too; elsewhere ("what's known about return to
# work", "opioid use disorder") it may be the subject.
_FRAME_VERB = re.compile(
    r"\b(?:how|what|which|where|when|why|who)\s+(?:do|does|did|is|are|was|were|can|could|should|would|will|has|have|"
    r"might|may)(?:n't)?\b((?:\s+(?!(?:for|in|on|about|with|after|before|to|of|against|among|versus|vs|during|from)\b)"
    r"[\w'-]+){0,6}?)\s+(work|works|worked|used|use|help|helps|helped|compare|affect|affects|influence|impact|"
    r"happen|mean|perform|fare|stack up|go|do)\b", re.I)


def without_scaffolding(text: str) -> str:
    """The request with the frame of a question around its subject blanked (see QUESTION_WORDS)."""
    text = _FRAME_VERB.sub(lambda m: m.group(0)[: m.start(2) - m.start(0)], text)
    return re.sub(r"[\w'’-]+", lambda m: " " if re.split("['’]", m.group(0).lower())[0] in QUESTION_WORDS
                  else m.group(0), text)


def consume(text: str, concepts: tuple[Concept, ...]) -> tuple[list[Concept], str]:
    """Concepts found in order, each blanking what it matched so a broader one cannot match it again."""
    lowered = text.lower()
    found = []
    for concept in concepts:
        if any(re.search(p, lowered) for p in concept.patterns):
            found.append(concept)
            for pattern in concept.patterns:
                lowered = re.sub(pattern + r"[\w-]*", " ", lowered)
    return found, lowered


def concepts_in(text: str) -> list[Concept]:
    return consume(text, CONCEPTS)[0]


def phases_in(text: str) -> list[str]:
    """Phase codes named in the text: "phase 2 or 3", "phase II/III", "phase three", "early phase 1"."""
    lowered = text.lower()
    found: set[str] = set()
    for match in _PHASE_RUN.finditer(lowered):
        numbers = re.findall(_PHASE_NUM, match.group(0).removeprefix(match.group(1) or ""))
        for number in numbers:
            digit = _NUMBER[number]
            found.add("EARLY_PHASE1" if match.group(1) and digit == "1" else f"PHASE{digit}")
    if re.search(r"\blate[- ]phase|\bpivotal\b|\bconfirmatory\b", lowered):
        found.add("PHASE3")
    if re.search(r"\bfirst[- ]in[- ]human\b|\bearly[- ]phase\b(?!\s*(?:1|i)\b)", lowered):
        found.add("PHASE1")
    return sorted(found)


def statuses_in(text: str) -> list[str]:
    lowered = text.lower()
    found: list[str] = []
    for pattern, codes in STATUS_WORDS:
        if re.search(rf"\b(?:{pattern})\b", lowered):
            found += [c for c in codes if c not in found]
            lowered = re.sub(rf"\b(?:{pattern})\b", " ", lowered)
    return found


def sex_in(text: str) -> str | None:
    lowered = text.lower()
    female = re.search(r"\b(women|woman|female|females|girls|mothers|pregnan\w*)\b", lowered)
    male = re.search(r"\b(men|man|male|males|boys)\b", lowered)
    if female and not male:
        return "FEMALE"
    if male and not female:
        return "MALE"
    return None


def ages_in(text: str) -> tuple[int | None, int | None]:
    """(min_age, max_age) in years from "over 65", "18 to 40", "under 18", "pediatric", "elderly"."""
    lowered = text.lower().replace("≥", ">=").replace("≤", "<=")
    if m := re.search(r"\b(?:aged?|ages|between|people|patients|adults)?\s*(\d{1,3})\s*(?:-|–|to|and)\s*(\d{1,3})"
                      r"(?:\s*(?:years?|yrs?|y/?o))?\b(?!\s*(?:%|mg|patients|trials|participants))", lowered):
        first, last = int(m.group(1)), int(m.group(2))
        if first < last <= 120 and (re.search(r"\b(age|aged|ages|years?|old|people|patients|adults|between)\b",
                                            lowered)):
            return first, last
    low: int | None = None
    high: int | None = None
    if m := re.search(r"(?:over|older than|above|at least|>=?|aged)\s*(\d{1,3})\b|"
                      r"\b(\d{1,3})\s*(?:\+|and (?:older|over|up)|or (?:older|over))", lowered):
        low = int(m.group(1) or m.group(2)) + (1 if re.search(r"(?:older than|above|>(?!=))\s*\d", m.group(0)) else 0)
    if m := re.search(r"(?:under|younger than|below|<)\s*(\d{1,3})\b", lowered):
        high = int(m.group(1)) - 1
    elif m := re.search(r"(?:up to|at most|<=)\s*(\d{1,3})\b", lowered):
        high = int(m.group(1))
    if low is None and high is None:
        if re.search(r"\b(pediatric|paediatric|children|child|kids|adolescents?|infants?)\b", lowered):
            high = 17
        elif re.search(r"\b(elderly|older adults|older patients|seniors|geriatric)\b", lowered):
            low = 65
    return low, high


def sponsor_in(text: str) -> str | None:
    for name in SPONSORS:
        if re.search(rf"\b{re.escape(name)}\b", text, re.I):
            return name
    m = re.search(r"\b(?:sponsored|funded|run|led) by (?:the )?([A-Z][\w&.\-]*(?: [A-Z][\w&.\-]*){0,3})", text)
    if m:
        return m.group(1)
    m = re.search(r"\b([A-Z][\w&.]*)-(?:sponsored|funded|led)\b", text)
    return m.group(1) if m else None


def location_in(text: str) -> str | None:
    for place in PLACES:
        if re.search(rf"\b(?:in|at|near|from|within) (?:the )?{re.escape(place)}\b", text, re.I):
            return place
    return None


def leftover_terms(text: str, concepts: list[Concept]) -> list[str]:
    """Words of the request that no concept, phase, status, sex, age, place or sponsor accounts for."""
    _, lowered = consume(text, tuple(concepts))
    lowered = _PHASE_RUN.sub(" ", lowered)
    for pattern, _codes in STATUS_WORDS:
        lowered = re.sub(rf"\b(?:{pattern})\b", " ", lowered)
    for name in (*SPONSORS, *PLACES):
        lowered = re.sub(rf"\b{re.escape(name.lower())}\b", " ", lowered)
    words = re.findall(r"[a-z0-9][a-z0-9\-]+", lowered)
    return [w for w in words if w not in STOPWORDS and not w.isdigit()]
