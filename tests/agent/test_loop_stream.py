"""The agent loop reads the SDK's raw stream events and builds each assistant message itself: text, tool
inputs sent in JSON pieces, usage from `message_start`/`message_delta`, blocks it must not replay. Over the
real SDK and an `httpx2.MockTransport` that sends the Messages API's own frames, byte for byte."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx2
import pytest
from pydantic import BaseModel

from backend.agent.loop import run_turn
from backend.agent.schemas import AgentEvent, TextDelta, ToolCompleted, UsageUpdated
from backend.agent.state import LoopLimits, TurnState
from backend.demo.wire import Reply, frame, message_end, message_start
from backend.registry.tools import ToolConfig, ToolContext, ToolResult
from tests.fakes.mock_messages import sdk_client


class LookupInput(BaseModel):
    query: str


def start(index: int, block: dict[str, Any]) -> bytes:
    return frame("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})


def delta(index: int, body: dict[str, Any]) -> bytes:
    return frame("content_block_delta", {"type": "content_block_delta", "index": index, "delta": body})


def stop(index: int) -> bytes:
    return frame("content_block_stop", {"type": "content_block_stop", "index": index})


def tool_use(index: int, tool_id: str, pieces: list[str]) -> list[bytes]:
    return [start(index, {"type": "tool_use", "id": tool_id, "name": "lookup", "input": {}}),
            *(delta(index, {"type": "input_json_delta", "partial_json": p}) for p in pieces), stop(index)]


def text(index: int, pieces: list[str]) -> list[bytes]:
    return [start(index, {"type": "text", "text": ""}),
            *(delta(index, {"type": "text_delta", "text": p}) for p in pieces), stop(index)]


def body(reply: Reply, *blocks: list[bytes]) -> bytes:
    return b"".join([message_start("claude-fake", reply), *(f for block in blocks for f in block),
                     *message_end(reply)])


class Model:
    """Answers the i-th request with the i-th body, and keeps the requests."""

    def __init__(self, *bodies: bytes) -> None:
        self.bodies = list(bodies)
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(json.loads(request.content))
        return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                               content=self.bodies[len(self.requests) - 1])


async def run(model: Model, ran: list[str]) -> tuple[TurnState, list[AgentEvent]]:
    async def lookup(params: LookupInput, ctx: ToolContext) -> ToolResult:
        ran.append(params.query)
        return ToolResult(text=f"found {params.query}")

    tool = ToolConfig(name="lookup", description="Look something up.", input_model=LookupInput, executor=lookup)
    client = sdk_client(model)
    state = TurnState()
    try:
        events = [e async for e in run_turn(
            client, model="claude-fake", system=[{"type": "text", "text": "Be brief."}],
            messages=[{"role": "user", "content": "hello"}], tools=[tool], tool_ctx=ToolContext(), state=state,
            limits=LoopLimits(retry_backoff=0))]
    finally:
        await client.close()
    return state, events


async def test_a_message_is_built_from_its_raw_events() -> None:
    first = Reply(stop_reason="tool_use", input_tokens=1200, output_tokens=57, cache_read_input_tokens=300)
    model = Model(
        body(first,
             text(0, ["Let me ", "check."]),
             [start(1, {"type": "thinking", "thinking": "", "signature": ""}),
              delta(1, {"type": "thinking_delta", "thinking": "hmm"}),
              delta(1, {"type": "signature_delta", "signature": "sig"}), stop(1)],
             tool_use(2, "toolu_a", ["", '{"que', 'ry": "asp', 'irin"}']),
             tool_use(3, "toolu_b", [])),  # no input pieces: the start's `{}` stands (an invalid input here)
        body(Reply(input_tokens=1400, output_tokens=9), text(0, ["Found it."])))
    ran: list[str] = []
    state, events = await run(model, ran)

    assert ran == ["aspirin"]
    assert state.messages[0] == {"role": "assistant", "content": [
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "toolu_a", "name": "lookup", "input": {"query": "aspirin"}},
        {"type": "tool_use", "id": "toolu_b", "name": "lookup", "input": {}}]}
    assert state.messages[1]["content"][0] == {"type": "tool_result", "tool_use_id": "toolu_a",
                                               "content": "found aspirin", "is_error": False}
    assert state.messages[1]["content"][1]["is_error"] is True
    assert state.messages[2] == {"role": "assistant", "content": [{"type": "text", "text": "Found it."}]}
    assert state.text == "Let me check.\n\nFound it." and state.stop_reason == "end_turn"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == state.text
    # Usage: input from message_start, output as message_delta reports it, both calls counted.
    usage = [e for e in events if isinstance(e, UsageUpdated)]
    assert [(u.input_tokens, u.output_tokens, u.cache_read_input_tokens) for u in usage] == [
        (1200, 57, 300), (1400, 9, 0)]
    assert (state.usage.input_tokens, state.usage.output_tokens) == (2600, 66)
    assert state.last_input_tokens == 1400
    # The thinking block is never sent back as history.
    assert [b["type"] for b in model.requests[1]["messages"][1]["content"]] == ["text", "tool_use", "tool_use"]


async def test_a_tool_input_that_is_not_a_json_object_is_answered_not_run() -> None:
    """Malformed JSON from the model never breaks the turn: the tool is not run, the model is told why
    and tries again; the history it is sent holds an object where the input was."""
    model = Model(
        body(Reply(stop_reason="tool_use"), tool_use(0, "toolu_bad", ['{"query": "asp', "irin"])),
        body(Reply(stop_reason="tool_use"), tool_use(0, "toolu_list", ['["aspirin"]'])),
        body(Reply(stop_reason="tool_use"), tool_use(0, "toolu_ok", ['{"query": "aspirin"}'])),
        body(Reply(), text(0, ["Aspirin it is."])))
    ran: list[str] = []
    state, events = await run(model, ran)

    assert ran == ["aspirin"] and state.failure is None and state.text.endswith("Aspirin it is.")
    completed = [e for e in events if isinstance(e, ToolCompleted)]
    assert [e.is_error for e in completed] == [True, True, False]
    bad, listed = state.messages[1]["content"][0], state.messages[3]["content"][0]
    assert bad["is_error"] and "not valid JSON" in bad["content"]
    assert listed["is_error"] and "not an object" in listed["content"]
    sent = model.requests[1]["messages"]
    assert sent[1]["content"][0]["input"] == {} and sent[2]["content"][0]["tool_use_id"] == "toolu_bad"
    assert not state.invalid_inputs


def paced(pieces: list[str], gaps: list[float]) -> Any:
    """A model whose text deltas come `gaps[i]` seconds apart (the upstream's own silences)."""

    async def frames() -> Any:
        reply = Reply()
        yield message_start("claude-fake", reply) + start(0, {"type": "text", "text": ""})
        for piece, gap in zip(pieces, gaps, strict=True):
            await asyncio.sleep(gap)
            yield delta(0, {"type": "text_delta", "text": piece})
        yield stop(0) + b"".join(message_end(reply))

    def handle(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=frames())

    return handle


async def read_slowly(handler: Any, idle: float, pause: float) -> tuple[TurnState, list[str]]:
    """Run a turn whose consumer takes `pause` seconds over each event it is handed."""
    client, state, texts = sdk_client(handler), TurnState(), []
    try:
        async for event in run_turn(client, model="claude-fake", system=[], messages=[{"role": "user",
                                    "content": "hi"}], tools=[], tool_ctx=ToolContext(), state=state,
                                    limits=LoopLimits(idle_timeout=idle, model_retries=0)):
            if isinstance(event, TextDelta):
                texts.append(event.text)
            await asyncio.sleep(pause)
    finally:
        await client.close()
    return state, texts


async def test_the_idle_timeout_counts_the_upstreams_silence_only() -> None:
    """Each wait on the upstream is bounded, a slow consumer never is: it holds events longer than the
    idle timeout and the turn still completes; an upstream as silent as that ends it as `stalled`, soon."""
    state, texts = await read_slowly(paced(["a", "b", "c"], [0.05, 0.05, 0.05]), idle=0.2, pause=0.4)
    assert texts == ["a", "b", "c"] and state.failure is None and state.stop_reason == "end_turn"

    started = time.monotonic()
    state, texts = await read_slowly(paced(["a", "b"], [0.05, 3.0]), idle=0.2, pause=0)
    assert texts == ["a"] and state.failure is not None and state.failure.code == "stalled"
    assert time.monotonic() - started < 1.5

    # Waits that add up to more than the timeout, none longer than it: no stall.
    state, texts = await read_slowly(paced(list("abcdefgh"), [0.1] * 8), idle=0.2, pause=0)
    assert texts == list("abcdefgh") and state.failure is None


async def test_a_cancel_while_waiting_on_the_upstream_is_not_a_stall() -> None:
    """Stop cancels the turn's task while it waits on the model: that cancellation goes through as one,
    and the task is left with no cancellation of the watchdog's own pending."""
    task = asyncio.create_task(read_slowly(paced(["a", "b"], [0.05, 3.0]), idle=0.5, pause=0))
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()


async def test_the_sent_body_is_let_go_once_the_stream_opens() -> None:
    """The transport keeps the request's byte stream to the stream's end (httpcore's request holds the same
    object); a running turn must not hold its system prompt and tools twice more."""
    sent: list[httpx2.ByteStream] = []

    class Keeping(Model):
        def __call__(self, request: httpx2.Request) -> httpx2.Response:
            assert isinstance(request.stream, httpx2.ByteStream)
            sent.append(request.stream)
            return super().__call__(request)

    model = Keeping(body(Reply(input_tokens=10, output_tokens=2), text(0, ["Hi."])))
    state, _ = await run(model, [])

    assert state.text == "Hi." and model.requests[0]["messages"][0]["content"] == "hello"
    assert [b"".join(stream) for stream in sent] == [b""]


async def test_a_long_answer_and_tool_input_in_many_pieces_are_rebuilt_whole() -> None:
    """Pieces are joined as they come (not kept one object each): the history gets every one, in order."""
    words = [f"w{i} " for i in range(101)]
    raw = json.dumps({"query": "".join(words)})
    pieces = [raw[i:i + 3] for i in range(0, len(raw), 3)]
    model = Model(body(Reply(stop_reason="tool_use"), text(0, words), tool_use(1, "toolu_long", pieces)),
                  body(Reply(), text(0, ["Done."])))
    ran: list[str] = []
    state, _ = await run(model, ran)

    assert ran == ["".join(words)]
    assert state.messages[0]["content"][0] == {"type": "text", "text": "".join(words)}
    assert state.messages[0]["content"][1]["input"] == {"query": "".join(words)}
