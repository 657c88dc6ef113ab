"""The evaluator's wire format: system prompts, the user message layout, the JSON reply, and the
answer → verdict rule. Kept in one module so the evaluator and the demo model cannot drift apart.

The model answers the natural question "is this criterion true of the patient?" (yes / no / unknown /
not_applicable); code, not the model, turns that into a verdict from the patient's side (see `labels`):
a "yes" to an exclusion criterion means the exclusion applies, hence NOT_MET.

The first line of each system prompt is a stable tag (`CRITERION_TAG`, `TEXT_TAG`) by which the built-in
demo model recognises these requests; `parse_request` reads one back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from backend.criteria.labels import Verdict

CRITERION_TAG = "[colleague:criterion-eval v1]"
TEXT_TAG = "[colleague:text-eval v1]"

CriterionType = Literal["inclusion", "exclusion"] | None
Answer = Literal["yes", "no", "unknown", "not_applicable"]
ANSWERS: tuple[str, ...] = ("yes", "no", "unknown", "not_applicable")

CRITERION_SYSTEM_PROMPT = f"""{CRITERION_TAG}
You check one criterion against one document: a patient's clinical note when the criterion comes from a
clinical trial's eligibility list, or any document (an article abstract, a trial record) for a yes/no
question. Answer the question "is this criterion true of the patient (or of the document)?".

Reply with exactly one JSON object and nothing else, no prose and no code fence:
{{"answer": "yes" | "no" | "unknown" | "not_applicable",
 "reasoning": "one to four sentences: what the document says and why that decides the answer",
 "evidence": ["sentences copied verbatim from the document that support the answer"]}}

- "yes": the document shows the criterion is true. "no": the document shows it is false.
- "unknown": the document does not say enough to decide (for instance a lab value or test result that is
  not reported). Never guess.
- "not_applicable": the criterion cannot apply to this patient (e.g. about pregnancy for a male patient).
- For an exclusion criterion answer whether the patient HAS the excluded characteristic: "yes" means
  the patient would be excluded. Do not invert the question.
- For trial criteria: when the note does not mention a medically important condition or event at all,
  you may assume the patient does not have it (answer "no" for "has the condition"); this is how the
  reference annotators judged notes. Numeric thresholds need the number in the note.
- Quote evidence exactly; when the note's sentences are numbered ("3. ..."), keep the number.
- Keep the reasoning short.
"""

TEXT_SYSTEM_PROMPT = f"""{TEXT_TAG}
You answer one question about one document (a clinical note, an article abstract or a trial record),
using only what the document says.

Reply with exactly one JSON object and nothing else, no prose and no code fence:
{{"answer": "a short answer (a few words to two sentences), or null when the document does not say",
 "reasoning": "one to three sentences on how the document supports the answer",
 "evidence": ["sentences copied verbatim from the document"]}}
"""

_TYPE_NONE = "none"


def criterion_user_message(criterion: str, criterion_type: CriterionType, document: str) -> str:
    return (f"<criterion_type>{criterion_type or _TYPE_NONE}</criterion_type>\n"
            f"<criterion>\n{criterion.strip()}\n</criterion>\n"
            f"<document>\n{document.strip()}\n</document>")


def text_user_message(question: str, document: str) -> str:
    return f"<question>\n{question.strip()}\n</question>\n<document>\n{document.strip()}\n</document>"


def verdict_from_answer(answer: Answer, criterion_type: CriterionType) -> Verdict:
    """yes/no about the criterion → the patient-side verdict of `labels`."""
    if answer in ("unknown", "not_applicable"):
        return Verdict.UNKNOWN
    holds = answer == "yes"
    if criterion_type == "exclusion":
        return Verdict.NOT_MET if holds else Verdict.MET
    return Verdict.MET if holds else Verdict.NOT_MET


@dataclass(frozen=True)
class EvalRequest:
    """One evaluator request read back from its system prompt and user message."""

    kind: Literal["criterion", "text"]
    text: str  # the criterion or the question
    criterion_type: CriterionType
    document: str


def _block(name: str, message: str) -> str | None:
    start, end = f"<{name}>", f"</{name}>"
    i = message.find(start)
    j = message.rfind(end) if name == "document" else message.find(end, i + len(start))
    if i < 0 or j < i:
        return None
    return message[i + len(start): j].strip("\n")


def parse_request(system: str, user_message: str) -> EvalRequest | None:
    """Recognise an evaluator request by the tag on the system prompt's first line; None otherwise."""
    first_line = system.lstrip().split("\n", 1)[0].strip()
    document = _block("document", user_message)
    if document is None:
        return None
    if first_line == CRITERION_TAG:
        criterion = _block("criterion", user_message)
        raw_type = (_block("criterion_type", user_message) or _TYPE_NONE).strip().lower()
        if criterion is None or raw_type not in ("inclusion", "exclusion", _TYPE_NONE):
            return None
        ctype: CriterionType = None if raw_type == _TYPE_NONE else raw_type  # type: ignore[assignment]
        return EvalRequest("criterion", criterion, ctype, document)
    if first_line == TEXT_TAG:
        question = _block("question", user_message)
        return None if question is None else EvalRequest("text", question, None, document)
    return None

