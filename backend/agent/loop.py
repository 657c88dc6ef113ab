"""The agent loop: stream Claude's answer through the SDK, run tool calls, repeat; yield typed events.

It knows the `anthropic` SDK and the tool registry's types, never HTTP or the database. Everything the
turn produced is recorded in a `TurnState` the caller owns, so that whoever stops the turn (the user, a
dropped client, an API error) can still persist a history the Messages API accepts:
`TurnState.history()` pairs every `tool_use` with a `tool_result` and ends on an assistant message.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import anthropic
import anyio
import httpx2
import jsonschema

from backend.agent.events import (
    AgentEvent,
    Status,
    TextDelta,
    ToolCompleted,
    ToolProgressed,
    ToolStarted,
    TurnFailed,
    UsageUpdated,
)
from backend.registry.tools import ToolConfig, ToolContext, ToolProgress, ToolResult

RETRYABLE_ERROR_TYPES = {"overloaded_error", "rate_limit_error", "api_error", "timeout_error"}
INTERRUPTED_TOOL_TEXT = "The turn was interrupted before this tool finished; no result is available."


@dataclass
class LoopLimits:
    max_iterations: int = 15
    tool_budget: int = 12  # tool calls per turn before the model is told to stop and summarise
    max_tool_result_chars: int = 24_000
    heartbeat_seconds: float = 8.0
    max_tokens: int = 4096
    context_window: int = 200_000


@dataclass
class TurnState:
    """What one turn produced so far. The caller reads it after the loop ends or is cancelled."""

    messages: list[dict[str, Any]] = field(default_factory=list)  # API messages added by this turn
    partial_text: str = ""  # text of the assistant message still streaming
    text: str = ""  # all assistant text of the turn, as the model wrote it (markers included)
    tool_history: list[dict[str, Any]] = field(default_factory=list)
    tool_payloads: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=lambda: {
        "input_tokens": 0, "output_tokens": 0, "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0})
    stop_reason: str | None = None
    tool_calls: int = 0

    def history(self) -> list[dict[str, Any]]:
        """This turn's messages, repaired so the API accepts them as history whatever stopped the turn."""
        msgs = [dict(m) for m in self.messages]
        if self.partial_text.strip():
            msgs.append({"role": "assistant", "content": [{"type": "text", "text": self.partial_text}]})
        if msgs and msgs[-1]["role"] == "assistant":
            pending = [b["id"] for b in msgs[-1]["content"] if b.get("type") == "tool_use"]
            if pending:
                msgs.append({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": tid, "content": INTERRUPTED_TOOL_TEXT,
                     "is_error": True} for tid in pending]})
        if msgs and msgs[-1]["role"] == "user":
            msgs.append({"role": "assistant", "content": [{"type": "text", "text": "(turn interrupted)"}]})
        return msgs


def _block_param(block: Any) -> dict[str, Any]:
    if block.type == "text":
        return {"type": "text", "text": block.text}
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return block.model_dump(exclude_none=True)


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return (f"{text[:limit]}\n[truncated: {len(text) - limit} more characters not shown; "
            "ask for fewer items or a specific id]")


def _failure(err: BaseException) -> TurnFailed:
    if isinstance(err, anthropic.APIStatusError):
        code = getattr(err, "type", None) or f"http_{err.status_code}"
        retryable = code in RETRYABLE_ERROR_TYPES or err.status_code in (408, 409, 429) or err.status_code >= 500
        friendly = {
            "overloaded_error": "The model is overloaded right now. Please try again in a moment.",
            "rate_limit_error": "Too many requests to the model. Please wait a moment and retry.",
        }.get(code, f"The model returned an error: {getattr(err, 'api_message', None) or err.message}")
        return TurnFailed(message=friendly, code=code, retryable=retryable)
    if isinstance(err, anthropic.APITimeoutError):
        return TurnFailed(message="The model did not answer in time. Please retry.", code="timeout",
                          retryable=True)
    if isinstance(err, anthropic.APIConnectionError | httpx2.TransportError):
        return TurnFailed(message="The connection to the model was lost. Please retry.",
                          code="connection_lost", retryable=True)
    raise err


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
) -> AsyncIterator[AgentEvent]:
    """Run one user turn. `messages` is the history ending with the new user message."""
    limits = limits or LoopLimits()
    by_name = {t.name: t for t in tools}
    tool_defs = [t.to_anthropic() for t in tools]
    wrap_up = False
    yield Status(message="Thinking…")
    for iteration in range(limits.max_iterations):
        last_round = wrap_up or iteration == limits.max_iterations - 1
        request: dict[str, Any] = {"model": model, "max_tokens": limits.max_tokens, "system": system,
                                   "messages": messages + state.messages}
        if tool_defs:
            request["tools"] = tool_defs
            if last_round:
                request["tool_choice"] = {"type": "none"}
        try:
            async with client.messages.stream(**request) as stream:
                async for event in stream:
                    if event.type == "text":
                        text = event.text
                        if not state.partial_text and state.text and not state.text.endswith("\n\n"):
                            text = "\n\n" + text  # keep the answers of successive model calls apart
                        state.partial_text += text
                        yield TextDelta(text=text)
                final = await stream.get_final_message()
        except (anthropic.APIError, httpx2.TransportError) as err:
            yield _failure(err)
            return
        _add_usage(state, final.usage)
        yield _usage_event(final.usage, limits.context_window)
        state.text += state.partial_text
        state.partial_text = ""
        # Empty text blocks are rejected by the API when sent back as history.
        content = [_block_param(b) for b in final.content if not (b.type == "text" and not b.text)]
        state.stop_reason = final.stop_reason
        if final.stop_reason is None:
            if content:
                state.messages.append({"role": "assistant", "content": content})
            yield TurnFailed(message="The model's answer was cut off before it finished. Please retry.",
                             code="truncated", retryable=True)
            return
        if content:
            state.messages.append({"role": "assistant", "content": content})
        if final.stop_reason == "pause_turn":
            continue
        tool_uses = [b for b in content if b["type"] == "tool_use"]
        if final.stop_reason != "tool_use" or not tool_uses:
            if final.stop_reason == "refusal":
                note = "\n\n(The assistant declined to continue with this request.)"
                state.text += note
                yield TextDelta(text=note)
            elif final.stop_reason in ("max_tokens", "model_context_window_exceeded"):
                note = "\n\n(The answer reached the length limit and may be incomplete.)"
                state.text += note
                yield TextDelta(text=note)
            return
        results: list[dict[str, Any]] = []
        for block in tool_uses:
            state.tool_calls += 1
            index = len(state.tool_history)
            if state.tool_calls > limits.tool_budget:
                result = ToolResult(text=f"Tool budget of {limits.tool_budget} calls for this turn is used "
                                         "up. Do not call more tools: answer with what you have.",
                                    is_error=True)
                wrap_up = True
            else:
                yield ToolStarted(tool=block["name"], input=block["input"], index=index)
                outcome: ToolResult | None = None
                async for item in _execute(by_name, block, tool_ctx, limits):
                    if isinstance(item, ToolResult):
                        outcome = item
                    elif isinstance(item, ToolProgress):
                        yield ToolProgressed(tool=block["name"], index=index, stage=item.stage,
                                             message=item.message, progress=item.progress)
                    else:
                        yield item
                result = outcome or ToolResult(text=f"Error: {block['name']} returned no result.", is_error=True)
                if state.tool_calls >= limits.tool_budget:
                    wrap_up = True
            payload = None
            if result.payload:
                payload = {"id": uuid.uuid4().hex[:16], "type": result.payload["type"],
                           "data": result.payload.get("data"), "tool": block["name"]}
            if payload:
                state.tool_payloads.append(payload)
            text = _truncate(result.text, limits.max_tool_result_chars)
            state.tool_history.append({"tool_name": block["name"], "input": block["input"], "output": text,
                                       "is_error": result.is_error})
            if state.tool_calls <= limits.tool_budget:
                yield ToolCompleted(tool=block["name"], index=index, is_error=result.is_error,
                                    payload=payload)
            results.append({"type": "tool_result", "tool_use_id": block["id"], "content": text,
                            "is_error": result.is_error})
        if iteration == limits.max_iterations - 2:
            wrap_up = True
        state.messages.append({"role": "user", "content": results})
        if wrap_up:
            yield Status(message="Summarising…")


def _add_usage(state: TurnState, usage: Any) -> None:
    for key in state.usage:
        state.usage[key] += getattr(usage, key, 0) or 0


def _usage_event(usage: Any, context_window: int) -> UsageUpdated:
    return UsageUpdated(
        input_tokens=usage.input_tokens or 0, output_tokens=usage.output_tokens or 0,
        cache_read_input_tokens=usage.cache_read_input_tokens or 0,
        cache_creation_input_tokens=usage.cache_creation_input_tokens or 0,
        context_window=context_window)


async def _execute(
    by_name: dict[str, ToolConfig], block: dict[str, Any], ctx: ToolContext, limits: LoopLimits,
) -> AsyncIterator[ToolResult | ToolProgress | Status]:
    """Run one tool call; every failure becomes an `is_error` result the model can read."""
    name = block["name"]
    tool = by_name.get(name)
    if tool is None:
        yield ToolResult(text=f"Error: the tool {name!r} is not available here. Available tools: "
                              f"{', '.join(by_name) or 'none'}.", is_error=True)
        return
    try:
        jsonschema.validate(block["input"], tool.input_schema)
    except jsonschema.ValidationError as err:
        yield ToolResult(text=f"Error: invalid input for {name}: {err.message}", is_error=True)
        return
    queue: asyncio.Queue[Any] = asyncio.Queue()
    done = object()

    async def produce() -> None:
        try:
            await _drive(tool, dict(block["input"]), ctx, queue)
        except Exception as exc:  # model-facing: the tool failed, the turn goes on
            await queue.put(ToolResult(text=f"Error: {name} failed: {exc}", is_error=True))
        finally:
            await queue.put(done)

    task = asyncio.create_task(produce())
    started = time.monotonic()
    result: ToolResult | None = None
    try:
        while True:
            try:
                item = await asyncio.wait_for(queue.get(), timeout=limits.heartbeat_seconds)
            except TimeoutError:
                elapsed = int(time.monotonic() - started)
                yield Status(message=f"Still working on {name.replace('_', ' ')}… ({elapsed}s)")
                continue
            if item is done:
                break
            if isinstance(item, ToolResult):
                result = item
            else:
                yield item
    finally:
        if not task.done():
            task.cancel()
            with anyio.CancelScope(shield=True):
                await asyncio.gather(task, return_exceptions=True)
    yield result or ToolResult(text=f"Error: {name} returned no result.", is_error=True)


async def _drive(tool: ToolConfig, params: dict[str, Any], ctx: ToolContext, queue: asyncio.Queue[Any]) -> None:
    """Call an executor of any shape (sync, async, generator, async generator) and queue what it yields."""
    fn = tool.executor
    if inspect.isasyncgenfunction(fn):
        async for item in fn(params, ctx):
            await queue.put(_as_item(item))
        return
    if inspect.iscoroutinefunction(fn):
        await queue.put(_as_result(await fn(params, ctx)))
        return
    if inspect.isgeneratorfunction(fn):
        gen = fn(params, ctx)
        while True:
            finished, item = await anyio.to_thread.run_sync(_step, gen)
            if finished:  # a generator may `return` its ToolResult instead of yielding it
                if item is not None:
                    await queue.put(_as_result(item))
                return
            await queue.put(_as_item(item))
    await queue.put(_as_result(await anyio.to_thread.run_sync(fn, params, ctx)))


def _step(gen: Any) -> tuple[bool, Any]:
    try:
        return False, next(gen)
    except StopIteration as stop:
        return True, stop.value


def _as_item(item: Any) -> ToolResult | ToolProgress:
    return item if isinstance(item, ToolProgress) else _as_result(item)


def _as_result(value: Any) -> ToolResult:
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult(text=value)
    return ToolResult(text=json.dumps(value, default=str))
