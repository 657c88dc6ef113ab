"""VALIDATE: ask the model whether one criterion holds for one document, through the `anthropic` SDK.

`evaluate_criterion` backs both the criterion eval harness and the apps' yes/no AI columns (an AI column
passes `criterion_type=None`); `evaluate_text` backs the text AI columns. Each call sends exactly one
Messages API request (non-streaming) and never raises on a bad reply: malformed or off-schema JSON, a
refusal or a truncated answer becomes an UNKNOWN verdict (or a None text answer) with the reason in
`parse_error`. Transport and API errors (`anthropic.APIError`, `httpx2.TransportError`) do propagate:
the caller decides whether to retry, skip or stop.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any, NamedTuple

import anthropic
from pydantic import BaseModel, ConfigDict, Field

from backend.criteria.labels import Verdict
from backend.criteria.prompts import (
    ANSWERS,
    CRITERION_SYSTEM_PROMPT,
    TEXT_SYSTEM_PROMPT,
    Answer,
    CriterionType,
    criterion_user_message,
    text_user_message,
    verdict_from_answer,
)

DEFAULT_MAX_TOKENS = 1024

# List prices in USD per million (input, output) tokens; the longest matching prefix wins. An unknown
# model has no estimate (None) rather than a made-up one.
PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-6": (5.0, 25.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-haiku-4": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
}


def estimate_cost_usd(model: str, input_tokens: int, output_tokens: int) -> float | None:
    matches = [prefix for prefix in PRICES_PER_MTOK if model.startswith(prefix)]
    if not matches:
        return None
    price_in, price_out = PRICES_PER_MTOK[max(matches, key=len)]
    return (input_tokens * price_in + output_tokens * price_out) / 1_000_000


class CriterionVerdict(BaseModel):
    """The evaluator's verdict on one criterion; `label` is read from the patient's side (`labels`)."""

    model_config = ConfigDict(frozen=True)

    label: Verdict
    reasoning: str
    evidence: list[str] = Field(default_factory=list)
    parse_error: str | None = None  # set when the reply could not be used; label is then UNKNOWN


class CallUsage(BaseModel):
    """What one Messages API call cost and returned (the spec's ModelResponse, plus the stop reason)."""

    model_config = ConfigDict(frozen=True)

    model: str
    input_tokens: int  # uncached + cache writes + cache reads
    output_tokens: int
    latency_ms: float
    stop_reason: str | None
    estimated_cost_usd: float | None
    token_count_estimated: bool = False
    raw_text: str = ""
    parse_error: str | None = None


class TextAnswer(NamedTuple):
    answer: str | None  # None: the document does not say, or the reply was unusable (see usage.parse_error)
    reasoning: str
    evidence: list[str]
    usage: CallUsage


_FENCED = re.compile(r"```[A-Za-z]*\s*\n?(.*?)```", re.DOTALL)


def extract_json_object(text: str, required_key: str = "answer") -> tuple[dict[str, Any] | None, str | None]:
    """Find the reply's JSON object holding `required_key`: the whole text, a fenced block, or the first
    such object embedded in prose. Returns (object, None) or (None, why not). An object without the key
    (say, a stray `{"label": …}`) is never taken for the answer."""
    stripped = text.strip()
    if not stripped:
        return None, "empty reply"
    found: list[dict[str, Any]] = []
    for candidate in (stripped, *(m.group(1).strip() for m in _FENCED.finditer(stripped))):
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            found.append(value)
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", stripped):
        if any(required_key in obj for obj in found):
            break
        try:
            value, _ = decoder.raw_decode(stripped, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            found.append(value)
    for obj in found:
        if required_key in obj:
            return obj, None
    return None, f"no JSON object with an {required_key!r} field in the reply: {stripped[:120]!r}"


def _normalize_answer(value: Any) -> Answer | None:
    if value is True:
        return "yes"
    if value is False:
        return "no"
    if value is None:
        return "unknown"
    if not isinstance(value, str):
        return None
    key = re.sub(r"[\s\-/]+", "_", value.strip().lower())
    key = {"n_a": "not_applicable", "na": "not_applicable"}.get(key, key)
    return key if key in ANSWERS else None  # type: ignore[return-value]


def _evidence(value: Any) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [str(item).strip() for item in items if isinstance(item, (str, int)) and str(item).strip()]


def _reply_text(message: anthropic.types.Message) -> str:
    return "".join(block.text for block in message.content if block.type == "text")


def _usage(message: anthropic.types.Message, model: str, started: float, text: str,
           parse_error: str | None) -> CallUsage:
    u = message.usage
    input_tokens = ((u.input_tokens or 0) + (u.cache_creation_input_tokens or 0)
                    + (u.cache_read_input_tokens or 0))
    output_tokens = u.output_tokens or 0
    return CallUsage(model=model, input_tokens=input_tokens, output_tokens=output_tokens,
                     latency_ms=round((time.perf_counter() - started) * 1000, 3),
                     stop_reason=message.stop_reason,
                     estimated_cost_usd=estimate_cost_usd(model, input_tokens, output_tokens),
                     raw_text=text, parse_error=parse_error)


def _unusable_reason(message: anthropic.types.Message, text: str, why: str) -> str:
    if message.stop_reason == "refusal":
        return "the model refused to answer"
    if message.stop_reason in ("max_tokens", "model_context_window_exceeded"):
        return f"the reply was cut off ({message.stop_reason}): {why}"
    return why


async def _create(client: anthropic.AsyncAnthropic, model: str, system: str, user: str,
                  max_tokens: int) -> anthropic.types.Message:
    """One evaluation request. A column asks the same instructions and the same criterion of every row,
    so both end in a cache breakpoint and only the row's document is read at full price after the first."""
    cut = user.find("<document>")
    head, document = (user[:cut], user[cut:]) if cut > 0 else ("", user)
    content: list[dict[str, Any]] = [{"type": "text", "text": document}]
    if head.strip():
        content.insert(0, {"type": "text", "text": head, "cache_control": {"type": "ephemeral"}})
    messages: Any = [{"role": "user", "content": content}]
    return await client.messages.create(
        model=model, max_tokens=max_tokens,
        system=[{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}], messages=messages)


async def evaluate_criterion(client: anthropic.AsyncAnthropic, model: str, criterion: str,
                             criterion_type: CriterionType, document: str, *,
                             max_tokens: int = DEFAULT_MAX_TOKENS) -> tuple[CriterionVerdict, CallUsage]:
    """One request: does `criterion` hold for `document`? → (verdict, usage)."""
    started = time.perf_counter()
    message = await _create(client, model, CRITERION_SYSTEM_PROMPT,
                            criterion_user_message(criterion, criterion_type, document), max_tokens)
    text = _reply_text(message)
    obj, why = extract_json_object(text)
    answer = _normalize_answer(obj.get("answer")) if obj is not None else None
    if obj is not None and answer is None:
        why = f"reply has no usable 'answer' (got {obj.get('answer')!r}; expected one of {list(ANSWERS)})"
    if message.stop_reason == "refusal":
        obj, answer = None, None
    if obj is None or answer is None:
        reason = _unusable_reason(message, text, why or "unusable reply")
        verdict = CriterionVerdict(label=Verdict.UNKNOWN, reasoning=f"No verdict: {reason}.",
                                   parse_error=reason)
        return verdict, _usage(message, model, started, text, reason)
    reasoning = obj.get("reasoning")
    verdict = CriterionVerdict(label=verdict_from_answer(answer, criterion_type),
                               reasoning=reasoning.strip() if isinstance(reasoning, str) else "",
                               evidence=_evidence(obj.get("evidence")))
    return verdict, _usage(message, model, started, text, None)


async def evaluate_text(client: anthropic.AsyncAnthropic, model: str, question: str, document: str, *,
                        max_tokens: int = DEFAULT_MAX_TOKENS) -> TextAnswer:
    """One request: answer `question` from `document` → (answer, reasoning, evidence, usage)."""
    started = time.perf_counter()
    message = await _create(client, model, TEXT_SYSTEM_PROMPT, text_user_message(question, document),
                            max_tokens)
    text = _reply_text(message)
    obj, why = extract_json_object(text)
    if message.stop_reason == "refusal":
        obj = None
    if obj is None:
        reason = _unusable_reason(message, text, why or "unusable reply")
        return TextAnswer(None, f"No answer: {reason}.", [], _usage(message, model, started, text, reason))
    raw_answer = obj["answer"]
    answer = raw_answer if isinstance(raw_answer, str) or raw_answer is None else json.dumps(raw_answer)
    reasoning = obj.get("reasoning")
    return TextAnswer(answer.strip() if answer is not None and answer.strip() else None,
                      reasoning.strip() if isinstance(reasoning, str) else "",
                      _evidence(obj.get("evidence")), _usage(message, model, started, text, None))
