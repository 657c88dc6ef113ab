"""Age criteria read as bounds ("aged 18 to 75", ">= 65 years", "18 years or older"): shared by the patient
note heuristics (`verdict`) and the record checks (`records`)."""

from __future__ import annotations

import re

_AGE_NUMBER = (re.compile(r"(\d+)\s*(?:-\s*)?(?:years?|yrs?|y/?o|y)\b"),
               re.compile(r"\bage[ds]?\b[^0-9.;]{0,25}?(\d+)"),
               re.compile(r"(\d+)\s*(?:or|and)\s*(?:older|younger|over|above)\b"))


def age_bounds(text: str) -> tuple[float | None, float | None, bool, bool] | None:
    """(low, high, low_strict, high_strict) for an age criterion, or None when it is not one. Only
    numbers tied to "age" or "years" count, so "> 95th percentile" or "FVC > 80 %" are not ages."""
    t = text.lower().replace("≥", ">=").replace("≤", "<=").replace("–", "-")
    in_other_units = re.search(r"\b(?:months?|weeks?|days?)\b", t) and not re.search(r"\byears?\b", t)
    if "gestation" in t or in_other_units:
        return None  # ages in months or gestational weeks: not worth the risk of misreading
    ages = {m.start(1) for pattern in _AGE_NUMBER for m in pattern.finditer(t)}
    if not ages:
        return None

    def find(*patterns: str) -> re.Match[str] | None:
        for pattern in patterns:
            for m in re.finditer(pattern, t):
                if any(m.start(g) in ages for g in range(1, (m.lastindex or 0) + 1)):
                    return m
        return None

    if m := find(r"(?:between|from)\s+(\d+)\s*(?:years?)?\s*(?:and|to|-)\s*(\d+)",
                 r"(\d+)\s*(?:-|to)\s*(\d+)"):
        return float(m.group(1)), float(m.group(2)), False, False
    low = high = None
    low_strict = high_strict = False
    if m := find(r"(?:>=|=>|at least|minimum (?:age )?(?:of )?)\s*(\d+)",
                 r"(\d+)\s*(?:years?|yrs?)?\s*(?:of age\s*)?(?:or|and)\s*(?:older|over|above|greater)"):
        low = float(m.group(1))
    elif m := find(r"(?:>|older than|over|above|greater than)\s*(\d+)"):
        low, low_strict = float(m.group(1)), True
    if m := find(r"(?:<=|=<|at most|maximum (?:age )?(?:of )?)\s*(\d+)",
                 r"(\d+)\s*(?:years?|yrs?)?\s*(?:of age\s*)?(?:or|and)\s*(?:younger|under|below|less)"):
        high = float(m.group(1))
    elif m := find(r"(?:<|younger than|under|below|less than)\s*(\d+)"):
        high, high_strict = float(m.group(1)), True
    if low is None and high is None:
        return None
    return low, high, low_strict, high_strict
