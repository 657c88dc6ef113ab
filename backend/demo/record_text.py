"""An AI column's document read back into its fields: the labelled lines `ai_columns/service.py` writes
(title, phase, sex, ages…), the abstract or summary, the eligibility text split into inclusion and
exclusion, and the primary outcomes."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

from backend.criteria.prompts import Answer

HEADERS = ("PubMed article PMID", "ClinicalTrials.gov trial record", "Summary of ")
_FIELD = re.compile(r"^([A-Z][A-Za-z ]{1,40}): (.+)$")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(])")


class Decision(NamedTuple):
    answer: Answer
    reasoning: str
    evidence: list[str]


@dataclass
class Record:
    kind: str  # "article" | "trial"
    fields: dict[str, str] = field(default_factory=dict)  # lower-cased label → value
    lines: dict[str, str] = field(default_factory=dict)  # lower-cased label → the whole line (evidence)
    body: str = ""  # the abstract (article) or summary (trial)
    inclusion: str = ""
    exclusion: str = ""
    outcomes: list[str] = field(default_factory=list)

    @property
    def eligibility(self) -> str:
        return f"{self.inclusion}\n{self.exclusion}".strip()

    @property
    def partial(self) -> bool:
        """A trial record without eligibility or sex (CSV-derived): its ages and eligibility are unknown."""
        return self.kind == "trial" and not self.eligibility and "sex" not in self.fields

    def values(self, label: str) -> list[str]:
        return [v.strip() for v in self.fields.get(label, "").split(";") if v.strip()]

    def text(self) -> str:
        """Everything the record says, one field or sentence a line."""
        return "\n".join([*self.lines.values(), *sentences(self.body), *sentences(self.eligibility)])


def sentences(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        out += [s.strip(" -*•") for s in _SENTENCE.split(line) if s.strip(" -*•")]
    return out


def parse_record(document: str) -> Record | None:
    """The record an AI column document describes, or None when the document is not one (a clinical note)."""
    first = document.lstrip().split("\n", 1)[0]
    if not first.startswith(HEADERS):
        return None
    record = Record(kind="trial" if "ClinicalTrials.gov" in first else "article")
    section = ""
    chunks: dict[str, list[str]] = {"body": [], "eligibility": [], "outcomes": []}
    for line in document.splitlines()[1:]:
        if line.startswith("Abstract:") or line.startswith("Brief summary:"):
            section = "body"
            rest = line.split(":", 1)[1].strip()
            if rest and rest != "none available":
                chunks["body"].append(rest)
            continue
        if line.startswith("Eligibility criteria:"):
            section = "eligibility"
            continue
        if line.startswith("Primary outcomes:"):
            section = "outcomes"
            continue
        match = _FIELD.match(line)
        if match and section in ("", "outcomes"):
            label = match.group(1).lower()
            record.fields[label] = match.group(2).strip()
            record.lines[label] = line.strip()
            section = ""
            continue
        if section:
            chunks[section].append(line)
    record.body = "\n".join(chunks["body"]).strip()
    record.outcomes = [o.strip("- ").strip() for o in chunks["outcomes"] if o.strip("- ").strip()]
    eligibility = "\n".join(chunks["eligibility"])
    split = re.split(r"(?im)^\s*exclusion criteria:?\s*$|\bexclusion criteria:", eligibility, maxsplit=1)
    record.inclusion = split[0].strip()
    record.exclusion = split[1].strip() if len(split) > 1 else ""
    return record
