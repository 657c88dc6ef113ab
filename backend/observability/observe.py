"""What the chat and the agent loop report: a turn's start and end, each model call, each tool call.

The call-sites are few and small on purpose (the loop and the chat service are not ours to reshape):

    runner   `turn_started(turn, continued)` when a turn's task starts, `.first_chunk()` on its first text,
             `.ended(stopped, failure)` after its final save
    loop     `with model_call(request, billed, blocks) as call:` around one streamed Messages API call,
             `call.message_started(message)`, `call.finished(stop_reason)`;
             `with tool_call(name, call_id, arguments) as call:` around one tool call, `call.result = result`

Each records its Prometheus metrics, its span (when tracing is on) and a log line, once per turn, model
call or tool call: never per delta. The turn's observation is kept in a context variable of the turn's
own task (`TurnRunner._run` runs there), so the loop's calls find their parent span and the log lines
their ids without anything passed through the loop. Spans of the loop's calls are started with the turn
span as explicit parent and never made current across a `yield` (a generator may be finalised in another
task, where detaching would fail).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

import structlog
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.instrumentation.utils import suppress_instrumentation
from opentelemetry.trace import SpanKind, Status, StatusCode

from backend.observability import metrics, tracing
from backend.observability.prices import price_for

log = logging.getLogger("backend.observability")
T = TypeVar("T")
PROVIDER = "anthropic"
AGENT_NAME = "Colleague"
price_overrides: str | None = None  # COLLEAGUE_MODEL_PRICES, set by `install`
_current: ContextVar[TurnObservation | None] = ContextVar("colleague_turn", default=None)


class TurnObservation:
    """One turn on this worker, from its task's start to its final save."""

    def __init__(self, turn: Any, continued: bool) -> None:
        self.started = time.perf_counter()
        self.first_chunk_at: float | None = None
        self.turn_id = turn.turn_id
        self.span: trace.Span | None = None
        if (tracer := tracing.tracer()) is not None:
            self.span = tracer.start_span(f"invoke_agent {AGENT_NAME}", kind=SpanKind.INTERNAL, attributes={
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT_NAME,
                "gen_ai.provider.name": PROVIDER, "gen_ai.conversation.id": str(turn.conversation_id),
                "gen_ai.request.model": turn.config.model, "colleague.turn.id": turn.turn_id,
                "colleague.turn.continued": continued, "enduser.id": str(turn.user_id)})
            # The turn's task is its own (a copy of the request's context): made current here, the turn
            # span is the parent of what the task does (SQL, httpx) and its log lines carry its trace id.
            otel_context.attach(trace.set_span_in_context(self.span))
        structlog.contextvars.bind_contextvars(user_id=turn.user_id, conversation_id=turn.conversation_id,
                                               turn_id=turn.turn_id)
        (metrics.TURNS_TAKEN_OVER if continued else metrics.TURNS_STARTED).inc()
        metrics.TURNS_RUNNING.inc()
        log.info("turn started", extra={"continued": continued, "model": turn.config.model})

    def first_chunk(self) -> None:
        if self.first_chunk_at is None:
            self.first_chunk_at = time.perf_counter()
            metrics.TIME_TO_FIRST_CHUNK.observe(self.first_chunk_at - self.started)

    def ended(self, stopped: bool, failure: Any) -> None:
        """`failure` is the turn's `ApiFailure` (None on success); a shutdown's code is `interrupted`."""
        code = getattr(failure, "code", None)
        outcome = "stopped" if stopped else "interrupted" if code == "interrupted" else \
            "errored" if failure is not None else "completed"
        error = code if outcome == "errored" else ""
        seconds = time.perf_counter() - self.started
        metrics.TURNS_ENDED.labels(outcome, error).inc()
        metrics.TURN_DURATION.labels(outcome).observe(seconds)
        metrics.TURNS_RUNNING.dec()
        if self.span is not None:
            self.span.set_attribute("colleague.turn.outcome", outcome)
            if error:
                self.span.set_attribute("error.type", error)
                self.span.set_status(Status(StatusCode.ERROR))
            self.span.end()
        log.info("turn ended", extra={"outcome": outcome, "error": error or None, "seconds": round(seconds, 3),
                                      "time_to_first_chunk": round(self.first_chunk_at - self.started, 3)
                                      if self.first_chunk_at is not None else None})


def turn_started(turn: Any, continued: bool = False) -> TurnObservation:
    """Call in the turn's own task: the observation becomes that task's current turn."""
    observation = TurnObservation(turn, continued)
    _current.set(observation)
    return observation


def _parent() -> otel_context.Context | None:
    turn = _current.get()
    return trace.set_span_in_context(turn.span) if turn is not None and turn.span is not None else None


class ModelCall:
    def __init__(self, request: Mapping[str, Any], billed: Any, blocks: Mapping[int, Any]) -> None:
        self.model = str(request.get("model", ""))
        self.billed = billed
        self.blocks = blocks
        self.stop_reason: str | None = None
        self.span: trace.Span | None = None
        if (tracer := tracing.tracer()) is not None:
            attributes: dict[str, Any] = {
                "gen_ai.operation.name": "chat", "gen_ai.provider.name": PROVIDER,
                "gen_ai.request.model": self.model, "gen_ai.request.max_tokens": int(request.get("max_tokens", 0))}
            if tracing.capture_content:
                attributes["gen_ai.system_instructions"] = json.dumps(request.get("system"), default=str)
                attributes["gen_ai.input.messages"] = json.dumps(request.get("messages"), default=str)
            self.span = tracer.start_span(f"chat {self.model}", context=_parent(), kind=SpanKind.CLIENT,
                                          attributes=attributes)

    async def traced(self, awaitable: Awaitable[T]) -> T:
        """Await the SDK's call with this span current (one await, no yield), so the SDK's own span is its child."""
        if self.span is None:
            return await awaitable
        token = otel_context.attach(trace.set_span_in_context(self.span))
        try:
            return await awaitable
        finally:
            otel_context.detach(token)

    def message_started(self, message: Any) -> None:
        if self.span is not None:
            self.span.set_attributes({"gen_ai.response.id": str(getattr(message, "id", "")),
                                      "gen_ai.response.model": str(getattr(message, "model", ""))})

    def finished(self, stop_reason: str | None) -> None:
        self.stop_reason = stop_reason

    def end(self, seconds: float, error: BaseException | None) -> None:
        outcome = "ok" if error is None else "cancelled" if isinstance(error, GeneratorExit | _cancelled()) \
            else "error"
        usage = {key: int(getattr(self.billed, key, 0) or 0) for key in metrics.TOKEN_TYPES}
        metrics.MODEL_CALL_DURATION.labels(self.model, outcome).observe(seconds)
        for key, kind in metrics.TOKEN_TYPES.items():
            if usage[key]:
                metrics.MODEL_TOKENS.labels(self.model, kind).inc(usage[key])
        if cost := price_for(self.model, price_overrides).cost(usage):
            metrics.MODEL_COST.labels(self.model).inc(cost)
        if self.span is not None:
            self.span.set_attributes({
                "gen_ai.usage.input_tokens": usage["input_tokens"] + usage["cache_read_input_tokens"]
                + usage["cache_creation_input_tokens"],
                "gen_ai.usage.output_tokens": usage["output_tokens"],
                "gen_ai.usage.cache_read.input_tokens": usage["cache_read_input_tokens"],
                "gen_ai.usage.cache_creation.input_tokens": usage["cache_creation_input_tokens"]})
            if self.stop_reason:
                self.span.set_attribute("gen_ai.response.finish_reasons", [self.stop_reason])
            if error is not None:
                self.span.set_attribute("error.type", type(error).__name__)
                self.span.set_status(Status(StatusCode.ERROR))
            if tracing.capture_content:
                self.span.set_attribute("gen_ai.output.messages", json.dumps(_output(self.blocks)))
            self.span.end()
        log.debug("model call ended", extra={"model": self.model, "outcome": outcome, "seconds": round(seconds, 3),
                                             "finish_reason": self.stop_reason, **usage})


def _output(blocks: Mapping[int, Any]) -> list[dict[str, Any]]:
    return [{"role": "assistant", "parts": [
        {"type": "text", "content": "".join(b.parts)} if b.type == "text" else
        {"type": "tool_call", "id": b.id, "name": b.name, "arguments": "".join(b.parts)}
        for _, b in sorted(blocks.items())]}]


def _cancelled() -> type[BaseException]:
    import asyncio
    return asyncio.CancelledError


@contextmanager
def model_call(request: Mapping[str, Any], billed: Any, blocks: Mapping[int, Any]) -> Iterator[ModelCall]:
    """One Messages API call; `billed` (its usage so far) and `blocks` (its content) are read at its end."""
    call = ModelCall(request, billed, blocks)
    started = time.perf_counter()
    try:
        yield call
    except BaseException as exc:
        call.end(time.perf_counter() - started, exc)
        raise
    call.end(time.perf_counter() - started, None)


class ToolCall:
    result: Any = None  # the tool's `ToolResult`, set by the loop when it has one


@contextmanager
def tool_call(name: str, call_id: str, arguments: Any) -> Iterator[ToolCall]:
    """One tool call; its outcome is `error` when its result `is_error`, `cancelled` when the turn stopped."""
    call = ToolCall()
    span = None
    if (tracer := tracing.tracer()) is not None:
        attributes: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                                      "gen_ai.tool.call.id": call_id, "gen_ai.tool.type": "function"}
        if tracing.capture_content:
            attributes["gen_ai.tool.call.arguments"] = json.dumps(arguments, default=str)
        span = tracer.start_span(f"execute_tool {name}", context=_parent(), kind=SpanKind.INTERNAL,
                                 attributes=attributes)
    started = time.perf_counter()
    outcome = "cancelled"
    try:
        yield call
        outcome = "error" if call.result is None or getattr(call.result, "is_error", False) else "ok"
    finally:
        seconds = time.perf_counter() - started
        metrics.TOOL_CALL_DURATION.labels(name, outcome).observe(seconds)
        if span is not None:
            if outcome != "ok":
                span.set_attribute("error.type", "tool_error" if outcome == "error" else "cancelled")
                span.set_status(Status(StatusCode.ERROR))
            if tracing.capture_content and call.result is not None:
                span.set_attribute("gen_ai.tool.call.result", str(getattr(call.result, "text", "")))
            span.end()
        log.debug("tool call ended", extra={"tool": name, "outcome": outcome, "seconds": round(seconds, 3)})


# -- the rest of what the issue counts: one line at each place ----------------------------------------
@contextmanager
def reading(where: str) -> Iterator[None]:
    """A connection reading a turn: `local` (the turn runs on this worker) or `remote`."""
    gauge = metrics.READERS.labels(where)
    gauge.inc()
    try:
        yield
    finally:
        gauge.dec()


@contextmanager
def checkpoint(turns: int) -> Iterator[None]:
    """One checkpoint write (an await, never a yield, inside). Its SQL is never traced: a batch of many
    turns' events every tenth of a second belongs to no one request or turn."""
    metrics.CHECKPOINT_BACKLOG.set(turns)
    started = time.perf_counter()
    try:
        with suppress_instrumentation():
            yield
    finally:
        metrics.CHECKPOINT_DURATION.observe(time.perf_counter() - started)


def quota_refused(limit: str) -> None:
    metrics.QUOTA_REFUSALS.labels(limit).inc()


def ai_column_row(outcome: str) -> None:
    metrics.AI_COLUMN_ROWS.labels(outcome).inc()


def screening_evaluated(outcome: str = "ok") -> None:
    """For the screening feature: call once per screening evaluated (outcome e.g. ok|failed)."""
    metrics.SCREENINGS.labels(outcome).inc()
