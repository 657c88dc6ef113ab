"""The three criterion verdicts and the TrialGPT 6-label → 3-label mapping (the spec's table, verbatim).

What a verdict means: the mapping sends "not excluded" to MET and "excluded" to NOT_MET, so a verdict is
read from the patient's side ("does the patient pass this criterion?"):

| criterion | MET                                  | NOT_MET                               |
|-----------|--------------------------------------|---------------------------------------|
| inclusion | the patient satisfies it             | the patient does not satisfy it       |
| exclusion | the exclusion does NOT apply         | the exclusion applies (patient out)   |
| untyped   | the statement holds for the document | the statement does not hold           |

Untyped criteria are the apps' yes/no AI columns. UNKNOWN covers "not enough information" and
"not applicable".
"""

from __future__ import annotations

from enum import StrEnum
from types import MappingProxyType


class Verdict(StrEnum):
    MET = "MET"
    NOT_MET = "NOT_MET"
    UNKNOWN = "UNKNOWN"


# The spec's table ("Label Mapping (6-class to 3-class)"), in its order.
LABEL_MAP: MappingProxyType[str, Verdict] = MappingProxyType({
    "included": Verdict.MET,
    "not excluded": Verdict.MET,
    "excluded": Verdict.NOT_MET,
    "not included": Verdict.NOT_MET,
    "not enough information": Verdict.UNKNOWN,
    "not applicable": Verdict.UNKNOWN,
})

RAW_LABELS: tuple[str, ...] = tuple(LABEL_MAP)


def map_label(raw: str) -> Verdict:
    """Map one raw TrialGPT label to a verdict. An unknown label is a data error and raises: silently
    counting it as UNKNOWN would distort every metric computed from it."""
    key = " ".join(raw.strip().lower().split())
    try:
        return LABEL_MAP[key]
    except KeyError:
        raise ValueError(f"unknown TrialGPT eligibility label {raw!r}; expected one of {RAW_LABELS}") \
            from None
