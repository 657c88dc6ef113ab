"""Tool dispatch for the agent loop, the way the SDK's tool runner does it: an unknown tool, an invalid
input, a tool that raises, or a call over the turn's tool budget each become an `is_error` tool_result
the model reads; the loop never dies because of a tool. A tool's progress, and a heartbeat while it is
quiet, stream out as events while it runs.
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import AsyncIterator
from typing import Any

from pydantic import ValidationError

from backend.agent.pump import Idle, Pump
from backend.agent.schemas import AgentEvent, Card, Status, ToolCall, ToolCompleted, ToolProgressed, ToolStarted
from backend.agent.state import LoopLimits, TurnState
from backend.errors import describe_validation_error
from backend.observability.observe import tool_call
from backend.registry.tools import ToolConfig, ToolContext, ToolProgress, ToolResult
from backend.text import clip


async def run_tools(tool_uses: list[dict[str, Any]], by_name: dict[str, ToolConfig], ctx: ToolContext,
                     state: TurnState, limits: LoopLimits) -> AsyncIterator[AgentEvent]:
    """Run the tool calls of one assistant message in order; their results become the next user message."""
    results: list[dict[str, Any]] = []
    for block in tool_uses:
        state.tool_calls += 1
        index = len(state.tool_history)
        over_budget = state.tool_calls > limits.tool_budget
        if over_budget:
            result = ToolResult(text=f"Tool budget of {limits.tool_budget} calls for this turn is used up. "
                                     "Do not call more tools: answer with what you have.", is_error=True)
            state.wrap_up = True
        else:
            yield ToolStarted(tool=block["name"], input=block["input"], index=index)
            result = ToolResult(text=f"Error: {block['name']} returned no result.", is_error=True)
            if why := state.invalid_inputs.pop(block["id"], None):
                result = ToolResult(text=f"Error: the input for {block['name']} is unusable: {why}. "
                                         "Call it again with a JSON object.", is_error=True)
            else:
                with tool_call(block["name"], block["id"], block["input"]) as call:  # metrics, span, log line
                    async for item in _execute(by_name, block, ctx, limits):
                        if isinstance(item, ToolResult):
                            result = call.result = item
                        elif isinstance(item, ToolProgress):
                            yield ToolProgressed(tool=block["name"], index=index, stage=item.stage,
                                                 message=item.message, progress=item.progress)
                        else:
                            yield item
            if state.tool_calls >= limits.tool_budget:
                state.wrap_up = True
        card = None
        if result.payload:
            card = Card(id=uuid.uuid4().hex[:16], type=result.payload["type"], data=result.payload.get("data"),
                        source="tool", tool=block["name"])
            state.tool_payloads.append(card)
        text = clip(result.text, limits.max_tool_result_chars,
                    note="\n[truncated: {rest} more characters not shown; ask for fewer items or a specific id]")
        state.tool_history.append(ToolCall(tool_name=block["name"], input=block["input"], output=text,
                                           is_error=result.is_error))
        if not over_budget:
            yield ToolCompleted(tool=block["name"], index=index, is_error=result.is_error, payload=card)
        results.append({"type": "tool_result", "tool_use_id": block["id"], "content": text,
                        "is_error": result.is_error})
    state.messages.append({"role": "user", "content": results})


async def _execute(by_name: dict[str, ToolConfig], block: dict[str, Any], ctx: ToolContext,
                   limits: LoopLimits) -> AsyncIterator[ToolResult | ToolProgress | Status]:
    """Run one tool call; every failure becomes an `is_error` result the model can read."""
    name = block["name"]
    tool = by_name.get(name)
    if tool is None:
        yield ToolResult(text=f"Error: the tool {name!r} is not available here. Available tools: "
                              f"{', '.join(by_name) or 'none'}.", is_error=True)
        return
    try:
        params = tool.input_model.model_validate(block["input"])
    except ValidationError as exc:
        yield ToolResult(text=f"Error: invalid input for {name}: {describe_validation_error(exc)}", is_error=True)
        return
    pump = Pump(_drive(tool, params, ctx), idle_after=limits.heartbeat_seconds)
    try:
        async for item in pump:
            if isinstance(item, Idle):
                yield Status(message=f"Still working on {name.replace('_', ' ')}… ({int(item.elapsed)}s)")
            else:
                yield item
    except ValidationError as exc:  # a tool that builds a model of its own from valid input
        yield ToolResult(text=f"Error: invalid input for {name}: {describe_validation_error(exc)}", is_error=True)
    except Exception as exc:  # model-facing: the tool failed, the turn goes on
        yield ToolResult(text=f"Error: {name} failed: {exc}", is_error=True)
    finally:
        await pump.aclose()


async def _drive(tool: ToolConfig, params: Any, ctx: ToolContext) -> AsyncIterator[ToolResult | ToolProgress]:
    """An executor's progress and result as one stream, whether it returns or yields them."""
    outcome = tool.executor(params, ctx)
    if inspect.isasyncgen(outcome):
        async for item in outcome:
            yield item if isinstance(item, ToolProgress | ToolResult) else ToolResult(text=str(item))
        return
    value = await outcome  # type: ignore[misc]
    yield value if isinstance(value, ToolResult) else ToolResult(text=str(value))
