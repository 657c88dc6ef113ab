"""A criterion's judgement as the offline judge gives it: the wire format's answer, a reason, the evidence."""

from __future__ import annotations

from typing import Literal, NamedTuple

Answer = Literal["yes", "no", "unknown", "not_applicable"]


class Judged(NamedTuple):
    answer: Answer
    reasoning: str
    evidence: list[int]  # note sentence indices
