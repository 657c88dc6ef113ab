"""The three criterion verdicts, read from the patient's side ("does the patient pass this criterion?"):

| criterion | MET                                  | NOT_MET                               |
|-----------|--------------------------------------|---------------------------------------|
| inclusion | the patient satisfies it             | the patient does not satisfy it       |
| exclusion | the exclusion does NOT apply         | the exclusion applies (patient out)   |
| untyped   | the statement holds for the document | the statement does not hold           |

Untyped criteria are the apps' yes/no AI columns. UNKNOWN covers "not enough information" and
"not applicable". The TrialGPT benchmark maps its six labels onto these (`backend.eval.label_map`).
"""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    MET = "MET"
    NOT_MET = "NOT_MET"
    UNKNOWN = "UNKNOWN"
