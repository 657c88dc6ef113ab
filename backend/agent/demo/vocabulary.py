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


CONCEPTS: tuple[Concept, ...] = (
    Concept((r"\bnsclc\b", r"non[- ]small[- ]cell lung", r"\blung cancer", r"\blung adenocarcinoma"),
            "condition", "non-small cell lung cancer",
            '("Carcinoma, Non-Small-Cell Lung"[MeSH] OR "non-small cell lung cancer" OR NSCLC)'),
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
    Concept((r"\bdiabet",), "condition", "diabetes", '("Diabetes Mellitus"[MeSH] OR diabetes)'),
    Concept((r"\bdepress",), "condition", "depression", '("Depression"[MeSH] OR depression)'),
    Concept((r"\bimmunotherap", r"\bcheckpoint inhibitor", r"\bimmune checkpoint"), "intervention",
            "immunotherapy OR checkpoint inhibitor OR PD-1 OR PD-L1",
            '("Immunotherapy"[MeSH] OR "Immune Checkpoint Inhibitors"[MeSH] OR immunotherapy)'),
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

PHASES = {"early phase 1": "EARLY_PHASE1", "phase 1": "PHASE1", "phase i": "PHASE1", "phase 2": "PHASE2",
          "phase ii": "PHASE2", "phase 3": "PHASE3", "phase iii": "PHASE3", "phase 4": "PHASE4",
          "phase iv": "PHASE4"}
STATUS_WORDS = {
    "not yet recruiting": ["NOT_YET_RECRUITING"], "recruiting": ["RECRUITING"], "completed": ["COMPLETED"],
    "terminated": ["TERMINATED"], "active": ["RECRUITING", "ACTIVE_NOT_RECRUITING"],
    "ongoing": ["RECRUITING", "ACTIVE_NOT_RECRUITING"], "open": ["RECRUITING"],
}
STOPWORDS = set("""a an the and or of for in on to with about find search show me get give look looking want
need please some any all articles article papers paper literature studies study trials trial query queries
pubmed clinical that which who what are is be on new recent latest i we you can could would like build write
make help more""".split())


def concepts_in(text: str) -> list[Concept]:
    lowered = text.lower()
    return [c for c in CONCEPTS if any(re.search(p, lowered) for p in c.patterns)]


def phases_in(text: str) -> list[str]:
    lowered = text.lower()
    found = []
    for word, code in sorted(PHASES.items(), key=lambda kv: -len(kv[0])):
        if re.search(rf"\b{re.escape(word)}\b", lowered) and code not in found:
            found.append(code)
            lowered = lowered.replace(word, " ")
    return sorted(found)


def statuses_in(text: str) -> list[str]:
    lowered = text.lower()
    for word, codes in STATUS_WORDS.items():
        if re.search(rf"\b{word}\b", lowered):
            return codes
    return []


def leftover_terms(text: str, concepts: list[Concept]) -> list[str]:
    """Words of the request that no concept, phase or status accounts for (kept as free text)."""
    lowered = text.lower()
    for concept in concepts:
        for pattern in concept.patterns:
            lowered = re.sub(pattern + r"\w*", " ", lowered)
    for word in [*PHASES, *STATUS_WORDS]:
        lowered = re.sub(rf"\b{re.escape(word)}\b", " ", lowered)
    words = re.findall(r"[a-z0-9][a-z0-9\-]+", lowered)
    return [w for w in words if w not in STOPWORDS and not w.isdigit()]
