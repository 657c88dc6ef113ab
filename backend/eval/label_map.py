"""The TrialGPT 6-label → 3-label mapping (the spec's table, verbatim).

The mapping sends "not excluded" to MET and "excluded" to NOT_MET, so the experts' and GPT-4's labels
become verdicts read from the patient's side, as the evaluator's are (`backend.criteria.labels`).
"""

from __future__ import annotations

from types import MappingProxyType

from backend.criteria.labels import Verdict

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
