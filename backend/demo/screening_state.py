"""What the demo model reads off TrialScout's page context about the patient and the screening (the text
`backend/pages/screening_context.py` writes, exactly what Claude is shown), and how it reads a question
about them: which trial it names ("NCT…", "the second one", "the excluded one", "this one"), which
place, which statuses, which profile edit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from backend.demo.page_state import read
from backend.demo.vocabulary import statuses_in

_PATIENT = re.compile(r'^PATIENT (\d+) "(.*)"')
_SCREENING = re.compile(r"^SCREENING (\d+) \(([\w ]+);")
_TALLY = re.compile(r"(\d+) (ELIGIBLE|EXCLUDED|UNCERTAIN|NOT_RELEVANT)\b")
_ENTRY = re.compile(r"^(\d+)\. (NCT\d{8}) \| (\w+) \| score (-?[\d.]+) \| met (\d+), not met (\d+), unknown (\d+)"
                    r" \| (.*)$")
_OPEN = re.compile(r"^- Criteria view open: (NCT\d{8})")
_FACT = re.compile(r"^- ([A-Z][\w ]+): (.*)$")
NCT = re.compile(r"\bNCT\d{8}\b", re.I)
# How a question names the patient: "can she join?", "what would the patient need?", "screen her too".
PRONOUNS = r"she|he|they"
SUBJECT = rf"{PRONOUNS}|the patient"
OBJECT = r"her|him|them"
ORDINALS = {"first": 1, "1st": 1, "top": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
            "fifth": 5, "5th": 5, "sixth": 6, "6th": 6, "seventh": 7, "7th": 7, "eighth": 8, "8th": 8,
            "ninth": 9, "9th": 9, "tenth": 10, "10th": 10}
VERDICT_WORDS = {"EXCLUDED": r"exclud\w*|ruled out|disqualif\w*|rejected|not eligible|ineligible",
                 "UNCERTAIN": r"uncertain|unclear|unknown|undecided|maybe|borderline",
                 "ELIGIBLE": r"(?<!not )(?<!in)eligible|qualif\w+|match(?:es|ing)?",
                 "NOT_RELEVANT": r"not relevant|irrelevant|unrelated"}


@dataclass
class Entry:
    rank: int
    nct_id: str
    verdict: str
    score: float
    met: int
    not_met: int
    unknown: int
    title: str


@dataclass
class ScreeningState:
    patient_id: int | None = None
    label: str = ""
    facts: dict[str, str] = field(default_factory=dict)
    screening_id: int | None = None
    status: str = ""
    shortlist: list[Entry] = field(default_factory=list)
    open_nct_id: str | None = None
    loaded: list[dict[str, object]] = field(default_factory=list)
    tally: dict[str, int] = field(default_factory=dict)  # the whole screening's, when the shortlist is cut

    @property
    def pronoun(self) -> str:
        sex = self.facts.get("Sex", "")
        return "she" if sex == "female" else "he" if sex == "male" else "the patient"

    def by_verdict(self, verdict: str) -> list[Entry]:
        return [e for e in self.shortlist if e.verdict == verdict]

    def count(self, verdict: str) -> int:
        """How many screened trials have the verdict: the header's count, which covers trials the page cut."""
        return self.tally.get(verdict, len(self.by_verdict(verdict)))

    def entry(self, nct_id: str) -> Entry | None:
        return next((e for e in self.shortlist if e.nct_id == nct_id), None)


def screening_state(page: str | None, context: str) -> ScreeningState:
    state = ScreeningState(loaded=read(page, context).rows)
    in_patient = False
    for line in context.splitlines():
        if m := _PATIENT.match(line):
            state.patient_id, state.label, in_patient = int(m.group(1)), m.group(2), True
        elif m := _SCREENING.match(line):
            state.screening_id, state.status, in_patient = int(m.group(1)), m.group(2), False
            state.tally = {v: int(n) for n, v in _TALLY.findall(line)}
        elif m := _ENTRY.match(line):
            state.shortlist.append(Entry(int(m.group(1)), m.group(2), m.group(3), float(m.group(4)), int(m.group(5)),
                                         int(m.group(6)), int(m.group(7)), m.group(8)))
        elif m := _OPEN.match(line):
            state.open_nct_id = m.group(1)
        elif in_patient and (m := _FACT.match(line)):
            state.facts[m.group(1)] = m.group(2)
        elif not line.startswith("- "):
            in_patient = False
    return state


def named_trial(text: str, state: ScreeningState) -> tuple[str | None, int | None]:
    """(nct_id, rank) the question names: an NCT id, an ordinal (of a verdict: "the second excluded
    one"), "last", "this one" (the open criteria view), or a verdict alone ("the uncertain one")."""
    if m := NCT.search(text):
        return m.group(0).upper(), None
    low = text.lower()
    verdict = next((v for v, words in VERDICT_WORDS.items()
                    if re.search(rf"\b(?:{words})\b(?! for| in| to)", low)), None)
    ordinal = next((n for w, n in ORDINALS.items() if re.search(rf"\b{w}\b", low)), None)
    numbered = r"(?:#|number |no\.? ?|rank(?:ed)? |trial |study |option )(\d{1,3})\b"
    if ordinal is None and (m := re.search(numbered, low)):
        ordinal = int(m.group(1))
    if ordinal is None and re.search(r"\b(last|bottom)\b", low):
        ordinal = -1
    pool = state.by_verdict(verdict) if verdict and ordinal is not None else state.shortlist
    if ordinal is not None and pool:
        if ordinal == -1:
            return pool[-1].nct_id, None
        return (pool[ordinal - 1].nct_id, None) if ordinal <= len(pool) else (None, ordinal)
    if re.search(r"\b(this|that|the open|current) (one|trial|study)\b|\bit\b", low) and state.open_nct_id:
        return state.open_nct_id, None
    if verdict and (found := state.by_verdict(verdict)):
        return found[0].nct_id, None
    if state.open_nct_id:
        return state.open_nct_id, None
    return None, None


PLACE = re.compile(r"(?:near(?:by)?|close to|closest to|nearest to|around|in|at|of|from)\s+"
                   r"((?:[A-Z][\w.'-]*|St\.)(?:[ ,]+(?:[A-Z][\w.'-]*))*)")


def place_in(text: str) -> str | None:
    for m in PLACE.finditer(text):
        place = m.group(1).strip(" ,")
        if place.split()[0] not in {"NCT", "I", "Phase", "ECOG", "The"} and not NCT.match(place):
            return place
    return None


def radius_in(text: str) -> float | None:
    if m := re.search(r"(\d{1,4})\s*(km|kilomet\w*|mi\b|miles?)", text, re.I):
        value = float(m.group(1))
        return value if m.group(2).lower().startswith("k") else value * 1.609
    return None


def statuses(text: str) -> list[str]:
    """Trial statuses the question names ("recruiting", "not yet recruiting", "active"…)."""
    return statuses_in(text)
