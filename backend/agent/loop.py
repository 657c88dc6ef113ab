"""The agent loop: stream Claude's answer through the SDK, run tool calls, repeat; yield typed events.

It knows the `anthropic` SDK and the tool registry's types, never HTTP or the database. Everything the
turn produced is recorded in a `TurnState` the caller owns, so that whoever stops the turn (the user, a
dropped client, an API error) can still persist a history the Messages API accepts:
`TurnState.history()` pairs every `tool_use` with a `tool_result` and ends on an assistant message.
The tool calls a model message asks for run in `backend.agent.dispatch`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anthropic
import httpx2

from backend.agent.dispatch import run_tools
from backend.agent.errors import ApiFailure, classify_api_error, stalled, told_wait
from backend.agent.schemas import (
    AgentEvent,
    Status,
    TextDelta,
    Usage,
    UsageUpdated,
)
from backend.agent.state import LoopLimits, TurnState
from backend.observability.observe import model_call
from backend.registry.tools import ToolConfig, ToolContext

log = logging.getLogger(__name__)
T = TypeVar("T")

TRUNCATED = ApiFailure(message="The model's answer was cut off before it finished. Please retry.",
                       code="truncated", retryable=True)
ENDING_NOTES = {
    "refusal": "\n\n(The assistant declined to continue with this request.)",
    "max_tokens": "\n\n(The answer reached the length limit and may be incomplete.)",
    "model_context_window_exceeded": "\n\n(The answer reached the length limit and may be incomplete.)",
}


class Stalled(Exception):
    """The Messages API sent nothing for `LoopLimits.idle_timeout` seconds."""


async def run_turn(
    client: anthropic.AsyncAnthropic,
    *,
    model: str,
    system: list[dict[str, Any]],
    messages: list[dict[str, Any]],
    tools: Sequence[ToolConfig],
    tool_ctx: ToolContext,
    state: TurnState,
    limits: LoopLimits | None = None,
) -> AsyncGenerator[AgentEvent, None]:
    """Run one user turn: call the model, run the tools it asked for, decide by the stop reason; repeat.
    `messages` is the history ending with the new user message. A failed model call ends the loop with
    `state.failure` set."""
    limits = limits or LoopLimits()
    by_name = {t.name: t for t in tools}
    tool_defs = [t.to_anthropic() for t in tools]
    yield Status(message="Thinking…")
    for iteration in range(limits.max_iterations):
        # A turn continued on another worker starts with the partial answer it had: the model goes on from
        # it as an assistant prefill (the API refuses one that ends in whitespace).
        prefill = [{"role": "assistant", "content": [{"type": "text", "text": state.partial_text.rstrip()}]}] \
            if state.partial_text.strip() else []
        request: dict[str, Any] = {"model": model, "max_tokens": limits.max_tokens, "system": system,
                                   "messages": with_cache_breakpoint(messages + state.messages + prefill)}
        if tool_defs:
            request["tools"] = tool_defs
            if state.wrap_up or iteration == limits.max_iterations - 1:
                request["tool_choice"] = {"type": "none"}
        async for event in _call_with_retries(client, request, state, limits):
            yield event
        if state.failure:
            return
        if state.stop_reason is None:
            state.failure = TRUNCATED
            return
        if state.stop_reason == "pause_turn":
            continue
        tool_uses = [b for b in state.messages[-1]["content"] if b["type"] == "tool_use"] \
            if state.messages and state.messages[-1]["role"] == "assistant" else []
        if state.stop_reason != "tool_use" or not tool_uses:
            if note := ENDING_NOTES.get(state.stop_reason):
                state.text += note
                yield TextDelta(text=note)
            return
        async for event in run_tools(tool_uses, by_name, tool_ctx, state, limits):
            yield event
        if iteration == limits.max_iterations - 2:
            state.wrap_up = True
        if state.wrap_up:
            yield Status(message="Summarising…")


def with_cache_breakpoint(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages with a cache breakpoint on the last block, so the next request (this turn's next
    model call, or the next turn) reads this whole prompt from the cache. The stored history is not
    touched: only the last message and its last block are copied."""
    if not messages or not isinstance(messages[-1].get("content"), list) or not messages[-1]["content"]:
        return messages
    last = dict(messages[-1])
    content = [*last["content"][:-1], {**last["content"][-1], "cache_control": {"type": "ephemeral"}}]
    return [*messages[:-1], {**last, "content": content}]


async def _call_with_retries(client: anthropic.AsyncAnthropic, request: dict[str, Any], state: TurnState,
                             limits: LoopLimits) -> AsyncIterator[AgentEvent]:
    """One model call, retried (with backoff) while it fails in a way waiting can cure and nothing of it
    has been shown yet; the SDK itself never retries (`llm.py`), so a spend limit fails at once. A
    failure that stays sets `state.failure`. A stall is not retried: the user has waited long enough."""
    for attempt in range(limits.model_retries + 1):
        shown = False
        try:
            async for event in _call_model(client, request, state, limits):
                shown = shown or isinstance(event, TextDelta)
                yield event
            return
        except (anthropic.APIError, httpx2.TransportError) as err:
            failure = classify_api_error(err)
            told = told_wait(err)
            if shown or not failure.retryable or attempt == limits.model_retries or _told_not_to_retry(err) \
                    or (told is not None and told > limits.max_told_wait):
                state.failure = failure
                return
        except Stalled:
            state.failure = stalled(limits.idle_timeout)
            return
        if failure.code == "connection_lost" and attempt == 0:
            continue  # a pooled connection that went stale: reconnect at once, nothing to tell the user
        delay = told if told is not None else limits.retry_backoff * 2 ** attempt  # the API's word first
        log.info("model call failed (%s); retry %d in %.1fs", failure.code, attempt + 1, delay)
        yield Status(message=f"The model call failed; retrying ({attempt + 2} of {limits.model_retries + 1})…")
        await asyncio.sleep(delay)


def _drop_sent_body(stream: object) -> None:
    """The request is sent once the stream opens, yet the SDK's stream keeps its copy of the parameters and
    the request's JSON bytes to its end: with a page's system prompt and tools, ~20 KB a running turn
    (benchmarks/README.md). Let go of them (a failed call is retried with a new request, built afresh)."""
    if hasattr(stream, "_options"):
        stream._options = None
    request = getattr(getattr(stream, "response", None), "request", None)
    if isinstance(request, httpx2.Request) and hasattr(request, "_content"):
        if isinstance(request.stream, httpx2.ByteStream):
            # the transport's own request (httpcore's, held by the response's stream) shares this object
            request.stream._stream = b""
        request._content = b""
        request.stream = httpx2.ByteStream(b"")


async def _call_model(client: anthropic.AsyncAnthropic, request: dict[str, Any], state: TurnState,
                      limits: LoopLimits) -> AsyncIterator[AgentEvent]:
    """One streamed model call: text deltas as they come, then its usage; the assistant message it wrote
    joins `state.messages` and its stop reason `state.stop_reason`.

    It reads the SDK's raw stream events (`messages.create(stream=True)`) and builds the message itself:
    the `messages.stream()` helper rebuilds a snapshot of the whole message on every event, which more
    than doubled the event loop's time per delta. Usage is counted into `state.usage` from `message_start`/
    `message_delta` as they arrive, so a call that is stopped or fails midway still records what was
    billed. Every wait on the upstream is bounded by `limits.idle_timeout` (raising `Stalled`, see
    `_Watchdog`); it never fires while an event is yielded, so whoever consumes this generator is never
    cancelled by it."""
    billed = Usage()  # this call's usage so far; the API sends cumulative numbers
    blocks: dict[int, _Block] = {}
    stop_reason: str | None = None
    prefilled = state.partial_text  # a continued answer's text so far (see run_turn)
    trim = prefilled != prefilled.rstrip()  # its trailing space was shown already: don't double it
    watchdog = _Watchdog(limits.idle_timeout)
    with model_call(request, billed, blocks) as call, closing(watchdog):  # metrics, span, log line
        stream = await watchdog.guard(call.traced(client.messages.create(**request, stream=True)))
        _drop_sent_body(stream)
        async with stream:
            events = aiter(stream)
            while True:
                watchdog.begin()
                try:
                    event = await anext(events, None)
                except asyncio.CancelledError:
                    if watchdog.stalled():
                        raise Stalled from None
                    raise
                watchdog.waiting = False
                if event is None:
                    break
                kind = event.type
                if kind == "content_block_delta":
                    delta = event.delta
                    if delta.type == "text_delta":
                        if (block := blocks.get(event.index)) is not None:
                            block.add(delta.text)
                        text = delta.text
                        if trim:
                            text, trim = text.lstrip(), not text.strip()
                            if not text:
                                continue
                        if not state.partial_text and state.text and not state.text.endswith("\n\n"):
                            text = "\n\n" + text  # keep the answers of successive model calls apart
                        state.partial_text += text
                        yield TextDelta(text=text)
                    elif delta.type == "input_json_delta" and (block := blocks.get(event.index)) is not None:
                        block.add(delta.partial_json)
                elif kind == "content_block_start":
                    started = event.content_block
                    blocks[event.index] = _Block(started.type, getattr(started, "id", ""),
                                                 getattr(started, "name", ""), getattr(started, "input", None))
                elif kind == "message_start":
                    call.message_started(event.message)
                    _count(state.usage, billed, event.message.usage)
                elif kind == "message_delta":
                    _count(state.usage, billed, event.usage)
                    stop_reason = event.delta.stop_reason
        call.finished(stop_reason)
    yield UsageUpdated(
        input_tokens=billed.input_tokens, output_tokens=billed.output_tokens,
        cache_read_input_tokens=billed.cache_read_input_tokens,
        cache_creation_input_tokens=billed.cache_creation_input_tokens, context_window=limits.context_window)
    state.last_input_tokens = billed.input_tokens + billed.cache_read_input_tokens + billed.cache_creation_input_tokens
    state.text += state.partial_text
    state.partial_text = ""
    state.stop_reason = stop_reason
    # Only text and tool_use go back as history: empty text blocks are rejected by the API, and content
    # of kinds we don't know is upstream data we have no business replaying.
    content = [param for _, block in sorted(blocks.items()) if (param := block.param(state)) is not None]
    if prefilled.strip():  # the API's message holds only what came after the prefill
        if content and content[0]["type"] == "text":
            rest = content[0]["text"]
            content[0] = {"type": "text", "text": prefilled + (rest.lstrip() if prefilled[-1].isspace() else rest)}
        else:
            content.insert(0, {"type": "text", "text": prefilled.rstrip()})
    if content:
        state.messages.append({"role": "assistant", "content": content})


_JOIN_EVERY = 32


@dataclass
class _Block:
    """One content block of a streamed message as it arrives: its text, or its tool input's JSON, in parts."""

    type: str
    id: str
    name: str
    input: Any
    parts: list[str] = field(default_factory=list)

    def add(self, part: str) -> None:
        """Joined every `_JOIN_EVERY` parts: a running turn holds its answer once more, not an object per delta
        (~60 B each beside a few bytes of text; benchmarks/README.md)."""
        parts = self.parts
        parts.append(part)
        if len(parts) >= _JOIN_EVERY:
            parts[:] = ["".join(parts)]

    def param(self, state: TurnState) -> dict[str, Any] | None:
        """The block as history; None for an empty text block or a kind we don't replay. A tool input that
        is not a JSON object goes back as `{}`, and the tool call will answer the model with why."""
        if self.type == "text":
            return {"type": "text", "text": text} if (text := "".join(self.parts)) else None
        if self.type != "tool_use":
            return None
        raw = "".join(self.parts)
        try:
            value = json.loads(raw) if raw.strip() else (self.input or {})
        except ValueError as exc:
            value, state.invalid_inputs[self.id] = {}, f"it is not valid JSON ({exc})"
        else:
            if not isinstance(value, dict):
                value, state.invalid_inputs[self.id] = {}, f"it is a JSON {type(value).__name__}, not an object"
        return {"type": "tool_use", "id": self.id, "name": self.name, "input": value}


def _told_not_to_retry(err: BaseException) -> bool:
    """The API's own word on an error (`x-should-retry: false`), which the SDK honours too."""
    response = getattr(err, "response", None)
    return response is not None and response.headers.get("x-should-retry") == "false"


class _Watchdog:
    """Bounds each wait on the upstream by `seconds`, with one timer per model call that is moved on
    lazily: a wait costs two attribute writes and a clock read, where an `asyncio.timeout` per event
    schedules and cancels a timer. It cancels the task only while `waiting` (never while an event is
    handed on), the way `asyncio.timeout` does; `stalled()` tells its cancellation from any other (Stop)
    and consumes it."""

    def __init__(self, seconds: float) -> None:
        self._loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        self._task = task
        self._cancelling = task.cancelling()
        self.seconds = seconds
        self.since = self._loop.time()  # when the current wait began
        self.waiting = True
        self._fired = False
        self._timer = self._loop.call_at(self.since + seconds, self._check)

    def begin(self) -> None:
        self.since = self._loop.time()
        self.waiting = True

    def _check(self) -> None:
        now = self._loop.time()
        due = self.since + self.seconds
        if self.waiting and now >= due:
            self._fired = True
            self._task.cancel()
        else:  # the wait under way is younger, or none is: look again when the next one could be due
            self._timer = self._loop.call_at(due if self.waiting else now + self.seconds, self._check)

    def stalled(self) -> bool:
        return self._fired and self._task.uncancel() <= self._cancelling

    async def guard(self, awaitable: Awaitable[T]) -> T:
        """Await one upstream step under the watchdog (the per-event path inlines this)."""
        self.begin()
        try:
            result = await awaitable
        except asyncio.CancelledError:
            if self.stalled():
                raise Stalled from None
            raise
        self.waiting = False
        return result

    def close(self) -> None:
        self._timer.cancel()


def _count(total: Usage, billed: Usage, reported: Any) -> None:
    """Bring `total` up to date with a call's cumulative usage report: fields it leaves out (or None)
    keep their earlier value, and only the growth since the last report is added."""
    for key in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
        value = getattr(reported, key, None)
        if value is not None and value != getattr(billed, key):
            setattr(total, key, getattr(total, key) + value - getattr(billed, key))
            setattr(billed, key, value)
