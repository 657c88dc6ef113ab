"""A model call that failed retryably waits as long as the API said (`retry-after-ms`, `retry-after`),
not the loop's own backoff; told to wait longer than it will, it fails at once. Over the real SDK and an
`httpx2.MockTransport` that sends the Messages API's own frames."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx2

from backend.agent.loop import run_turn
from backend.agent.schemas import TextDelta
from backend.agent.state import LoopLimits, TurnState
from backend.demo.wire import Reply, frame, message_end, message_start
from backend.registry.tools import ToolContext
from tests.fakes.mock_messages import sdk_client


def answer() -> bytes:
    return b"".join([message_start("claude-fake", Reply()),
                     frame("content_block_start", {"type": "content_block_start", "index": 0,
                                                   "content_block": {"type": "text", "text": ""}}),
                     frame("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                   "delta": {"type": "text_delta", "text": "Done."}}),
                     frame("content_block_stop", {"type": "content_block_stop", "index": 0}),
                     *message_end(Reply())])


class Limited:
    """A 429 with `headers`, then the answer; keeps when each request came."""

    def __init__(self, headers: dict[str, str]) -> None:
        self.headers = headers
        self.at: list[float] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.at.append(time.monotonic())
        if len(self.at) == 1:
            return httpx2.Response(429, headers=self.headers, json={
                "type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=answer())


async def run(model: Limited, limits: LoopLimits) -> TurnState:
    client = sdk_client(model)
    state = TurnState()
    try:
        events = [e async for e in run_turn(
            client, model="claude-fake", system=[{"type": "text", "text": "Be brief."}],
            messages=[{"role": "user", "content": "hello"}], tools=[], tool_ctx=ToolContext(), state=state,
            limits=limits)]
    finally:
        await client.close()
    assert state.failure is not None or "".join(e.text for e in events if isinstance(e, TextDelta)) == "Done."
    return state


async def test_retry_after_ms_is_waited_not_the_backoff() -> None:
    short = Limited({"retry-after-ms": "50", "retry-after": "9"})  # the finer one wins
    state = await run(short, LoopLimits(retry_backoff=30))
    assert state.failure is None and len(short.at) == 2
    assert 0.04 <= short.at[1] - short.at[0] < 5  # not the 30 s backoff, nor the 9 s

    longer = Limited({"retry-after-ms": "400"})
    state = await run(longer, LoopLimits(retry_backoff=0))
    assert state.failure is None and longer.at[1] - longer.at[0] >= 0.39  # told 0.4 s: not at once


async def test_retry_after_in_seconds_and_as_a_date() -> None:
    seconds = Limited({"retry-after": "1"})
    state = await run(seconds, LoopLimits(retry_backoff=0))
    assert state.failure is None and seconds.at[1] - seconds.at[0] >= 0.99

    when = format_datetime(datetime.now(UTC) + timedelta(seconds=2), usegmt=True)  # whole seconds: 1–2 s
    dated = Limited({"retry-after": when})
    state = await run(dated, LoopLimits(retry_backoff=0))
    assert state.failure is None and dated.at[1] - dated.at[0] >= 0.9


async def test_told_to_wait_longer_than_the_limit_fails_at_once() -> None:
    model = Limited({"retry-after": "3600"})
    state = await run(model, LoopLimits(retry_backoff=0, max_told_wait=60))
    assert len(model.at) == 1
    assert state.failure is not None and state.failure.code == "rate_limit_error" and state.failure.retryable
