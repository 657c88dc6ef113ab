"""Readings a criterion sets as a value, checked against the value the note states: a cancer's stage
("stage IIB-IVA", "stage III or IV" against "stage 1B"), the ECOG performance status ("ECOG 0-1" against
"ECOG 2") and a few labs with a unit that pins them ("ejection fraction < 35%" against "EF was 25%").

`compare(note_sentences, criterion)` answers "inside" or "outside" the criterion's values, with the sentence
that states the patient's value, or None when the criterion sets no such value or the note does not state
it: the rules decide only what both texts spell out; the rest stays with the judge.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple

from backend.screening.note_reader import any_of

Place = Literal["inside", "outside"]


class Reading(NamedTuple):
    place: Place
    sentence: int
    what: str  # "stage IB", "ECOG 2", "ejection fraction 25"


_ROMAN = {"i": 1, "ii": 2, "iii": 3, "iv": 4, "1": 1, "2": 2, "3": 3, "4": 4, "0": 0}
_STAGE_TOKEN = r"(?:iv|iii|ii|i|[0-4])(?:[abc])?\b"
_NOTE_STAGE = re.compile(rf"\bstage\s+({_STAGE_TOKEN})", re.I)
_CRITERION_STAGE = re.compile(rf"\bstages?\s+((?:{_STAGE_TOKEN}(?:\s*(?:-|–|to|through|,|/|or|and)\s*"
                              rf"(?:stage\s+)?)?)+)", re.I)
_STAGE_PART = re.compile(rf"({_STAGE_TOKEN})(?:\s*(?:-|–|to|through)\s*(?:stage\s+)?({_STAGE_TOKEN}))?", re.I)
_METASTATIC = re.compile(r"(?<!non-)(?<!non )(?<!no )\bmetastatic\b", re.I)


def _stage(token: str) -> tuple[int, int]:
    """(number, letter: 0 none, 1 A, 2 B, 3 C)."""
    token = token.lower()
    letter = token[-1] if token[-1] in "abc" and token not in ("i", "ii", "iii", "iv") else ""
    return _ROMAN[token[: len(token) - len(letter)]], " abc".index(letter) if letter else 0


def _within(stage: tuple[int, int], low: tuple[int, int], high: tuple[int, int]) -> bool | None:
    """Is `stage` within low..high (a bound without a letter takes the whole stage)? None when the note's
    stage lacks the letter a bound needs ("stage II" against "IIB-IV")."""
    if stage[1] == 0:
        if low[0] < stage[0] < high[0] or stage[0] < low[0] or stage[0] > high[0]:
            return low[0] <= stage[0] <= high[0]
        return None if (stage[0] == low[0] and low[1] > 1) or (stage[0] == high[0] and 0 < high[1] < 3) else True
    return low <= stage <= (high if high[1] else (high[0], 3))


def _note_stage(sentences: Sequence[str]) -> tuple[tuple[int, int], int, str] | None:
    for i, s in enumerate(sentences):
        m = _NOTE_STAGE.search(s)
        if m:
            return _stage(m.group(1)), i, f"stage {m.group(1).upper()}"
    for i, s in enumerate(sentences):
        if _METASTATIC.search(s):
            return (4, 0), i, "metastatic (stage IV)"
    return None


def _stage_reading(sentences: Sequence[str], criterion: str) -> Reading | None:
    m = _CRITERION_STAGE.search(criterion)
    if not m:
        return None
    found = _note_stage(sentences)
    if found is None:
        return None
    stage, where, what = found
    fits: list[bool | None] = []
    for part in _STAGE_PART.finditer(m.group(1)):
        low = _stage(part.group(1))
        high = _stage(part.group(2)) if part.group(2) else low
        fits.append(_within(stage, low, high))
    if not fits or any(f is None for f in fits) and not any(fits):
        return None
    return Reading("inside" if any(fits) else "outside", where, what)


# ---- scales and labs: "<name> <comparator> <number>" in the criterion, "<name> <number>" in the note ----

# The comparators criteria write, shared with the age limits (`demo_judge`).
AT_LEAST = any_of(">= => ≥ > at_least greater_than_or_equal_to greater_than more_than over above")
AT_MOST = any_of("<= =< ≤ < at_most no_more_than not_more_than no_greater_than less_than_or_equal_to less_than under "
                 "below up_to")
_CMP = rf"(?P<cmp>{AT_LEAST}|{AT_MOST}|=|of|between|from)?"


class _Measure(NamedTuple):
    name: str
    criterion: re.Pattern[str]
    note: re.Pattern[str]
    plausible: Callable[[float], bool]


def _measure(name: str, words: str, unit: str, plausible: Callable[[float], bool]) -> _Measure:
    number = r"(?P<a>\d+(?:\.\d+)?)(?:\s*(?:-|–|to|and|or|,)\s*(?:\d+(?:\.\d+)?\s*(?:,|or)\s*)?(?P<b>\d+(?:\.\d+)?))?"
    return _Measure(
        name,
        re.compile(rf"\b(?:{words})\b[^\d<>≤≥.;]{{0,25}}?{_CMP}\s*{number}\s*{unit}", re.I),
        re.compile(rf"\b(?:{words})\b[^\d.;]{{0,20}}?(?P<a>\d+(?:\.\d+)?)\s*{unit}", re.I),
        plausible)


_MEASURES = (
    _measure("ECOG", r"ecog(?: performance status| ps)?|zubrod|who performance status", r"(?!\s*%)",
             lambda v: 0 <= v <= 5),
    _measure("ejection fraction", r"(?:left ventricular |lv )?ejection fraction|lvef|ef", r"%", lambda v: 5 <= v <= 90),
    _measure("BMI", r"bmi|body mass index", r"(?:kg/m2|kg/m\^?2|kg/m²)?", lambda v: 10 <= v <= 80),
    _measure("HbA1c", r"hba1c|hemoglobin a1c|a1c|glycated hemoglobin", r"%", lambda v: 3 <= v <= 20),
)
_LOW = re.compile(rf"{AT_LEAST}|from", re.I)
_HIGH = re.compile(AT_MOST, re.I)


def _value_reading(sentences: Sequence[str], criterion: str) -> Reading | None:
    for m in _MEASURES:
        wanted = m.criterion.search(criterion)
        if not wanted:
            continue
        for i, s in enumerate(sentences):
            stated = m.note.search(s)
            if not stated or not m.plausible(value := float(stated.group("a"))):
                continue
            a = float(wanted.group("a"))
            b = float(wanted.group("b")) if wanted.group("b") else None
            cmp = wanted.group("cmp") or ""
            strict = cmp in ("<", ">") or cmp.lower() in ("less than", "more than", "greater than", "under",
                                                           "over", "above", "below")
            if b is not None and b > a:
                inside = a <= value <= b
            elif _LOW.fullmatch(cmp.lower()) or _LOW.match(cmp.lower()):
                inside = value > a if strict else value >= a
            elif _HIGH.match(cmp.lower()):
                inside = value < a if strict else value <= a
            else:
                continue  # "ECOG 2" alone: a value, not a limit we can read
            return Reading("inside" if inside else "outside", i, f"{m.name} {value:g}")
    return None


def compare(sentences: Sequence[str], criterion: str) -> Reading | None:
    return _stage_reading(sentences, criterion) or _value_reading(sentences, criterion)
