"""The model edge of a turn, through the public API against the scripted Messages API: a silent upstream
is abandoned after the idle timeout, usage is counted from the stream as it arrives (so every ending
records what was billed), and only failures that waiting can cure are retried, before anything shows."""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from backend.config import Settings
from backend.db.session import Database
from backend.demo.wire import Reply
from tests.chat.test_stream import _wait_for, follow_up_works, messages
from tests.conftest import add_user, make_settings
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.fakes.fake_page import CONTEXT, chat
from tests.sse import parse, parse_lines, text_of, types

pytestmark = pytest.mark.usefixtures("test_registry")

IDLE = 1.0
BILLED = 1000  # input tokens the fake reports in message_start


@pytest.fixture
def settings(db_url: str, fake_llm: FakeAnthropic) -> Settings:
    """The app of these tests gives up on a silent model after a second (the setting, not a patch)."""
    return make_settings(db_url, ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=fake_llm.url,
                         COLLEAGUE_MODEL_IDLE_TIMEOUT=IDLE)


@pytest.fixture(autouse=True)
def no_collector_pause() -> Iterator[None]:
    """These tests time a one-second idle timeout: a full collection of the suite's heap late in a run
    (up to a second, every thread stopped) would read as a model that went silent."""
    gc.disable()
    yield
    gc.enable()


@pytest.fixture
def fast(app: Any) -> Any:
    """No backoff between retries."""
    app.state.chat.limits.retry_backoff = 0
    return app


def test_a_stall_after_one_token_ends_the_turn(fast: Any, alice: TestClient, fake_llm: FakeAnthropic,
                                               db: Database) -> None:
    fake_llm.script(Script.stall("Half an answer.", after_deltas=1, input_tokens=BILLED))
    started = time.monotonic()
    events = chat(alice, "hi")
    assert time.monotonic() - started < IDLE + 3  # the fake stays silent for 10 s
    assert types(events) == ["conversation", "status", "text_delta", "error"]
    err = events[-1].data
    assert err["code"] == "stalled" and err["retryable"] is True
    assert "stopped responding" in err["message"] and "retry" in err["message"]
    conv_id = events[0].data["conversation_id"]
    stored = messages(db, conv_id)[1]
    assert stored.status == "failed" and stored.content == text_of(events).strip() == "Half"
    assert stored.extras["usage"]["input_tokens"] == BILLED
    assert err["message_id"] == stored.id
    assert _wait_for(fake_llm.disconnected.is_set)  # the silent upstream request was closed
    assert len(fake_llm.requests) == 1  # a stall is not retried
    follow_up_works(alice, fake_llm, conv_id)  # the conversation is free again (no 409)


def test_silence_before_the_first_event_counts_too(fast: Any, alice: TestClient, fake_llm: FakeAnthropic) -> None:
    fake_llm.script(Script.stall(after_deltas=None))
    started = time.monotonic()
    events = chat(alice, "hi")
    assert time.monotonic() - started < IDLE + 3
    assert types(events) == ["conversation", "status", "error"] and events[-1].data["code"] == "stalled"
    follow_up_works(alice, fake_llm, events[0].data["conversation_id"])


async def test_a_stall_leaves_no_task_behind(fast: Any, db: Database, fake_llm: FakeAnthropic) -> None:
    """The app in this event loop, so its tasks can be counted: after a stalled turn, none remain."""
    add_user(db, "carol")
    transport = httpx.ASGITransport(app=fast)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        r = await client.post("/api/auth/login", json={"username": "carol", "password": "secret-pw"})
        assert r.status_code == 200
        fake_llm.script(Script.text("Warm-up."))  # whatever the stack starts once per event loop
        assert (await client.post("/api/chat/stream", json={"message": "hi", "context": CONTEXT})).status_code == 200
        before = asyncio.all_tasks()
        fake_llm.script(Script.stall("Half an answer.", after_deltas=1))
        async with asyncio.timeout(IDLE + 5):
            r = await client.post("/api/chat/stream", json={"message": "and?", "context": CONTEXT})
        assert parse(r.text)[-1].data["code"] == "stalled"
        async with asyncio.timeout(3):  # a cancelled task needs a loop iteration or two to finish
            while left := [t for t in asyncio.all_tasks() - before if not t.done()]:
                await asyncio.wait(left, timeout=0.05)
        assert not left


@pytest.mark.parametrize("ending", ["stop", "disconnect", "error"])
def test_usage_is_recorded_however_the_turn_ends(ending: str, alice: TestClient, fake_llm: FakeAnthropic,
                                                 db: Database) -> None:
    if ending == "error":
        fake_llm.script(Script.stream_error(Reply(blocks=[{"type": "text", "text": "Partial thought"},
                                                          {"type": "text", "text": "never sent"}],
                                                  input_tokens=BILLED)))
        conv_id = chat(alice, "hi")[0].data["conversation_id"]
    else:
        fake_llm.script(Script.slow("Partial. ", input_tokens=BILLED))
        with alice.stream("POST", "/api/chat/stream", json={"message": "long one", "context": CONTEXT}) as r:
            seen = 0
            for event in parse_lines(r.iter_lines()):
                if event.event == "conversation":
                    conv_id = event.data["conversation_id"]
                seen += event.event == "text_delta"
                if seen == 2 and event.event == "text_delta":
                    if ending == "disconnect":
                        break
                    assert alice.post(f"/api/conversations/{conv_id}/stop").json() == {"stopped": True}
    # A client that leaves does not stop the turn: its usage is there from the first checkpoint on.
    rows = _wait_for(lambda: (m := messages(db, conv_id)) and len(m) == 2 and (m[1].extras or {}).get("usage")
                     and m)
    usage = rows[1].extras["usage"]
    assert usage["input_tokens"] == BILLED and usage["output_tokens"] >= 1  # message_start's output count
    if ending == "disconnect":
        alice.post(f"/api/conversations/{conv_id}/stop")
        _wait_for(lambda: messages(db, conv_id)[1].status != "running")
    follow_up_works(alice, fake_llm, conv_id)


@pytest.mark.parametrize(("message", "error_code"), [
    ("This request would exceed your organization's monthly spend limit.", None),
    ("Limit reached.", "enforced_spend_limit_reached"),
])
def test_a_spend_limit_is_not_retried(message: str, error_code: str | None, fast: Any, alice: TestClient,
                                      fake_llm: FakeAnthropic) -> None:
    fake_llm.script(Script.http_error(429, "rate_limit_error", message, error_code=error_code, should_retry=None))
    events = chat(alice, "hi")
    assert len(fake_llm.requests) == 1
    assert types(events) == ["conversation", "status", "error"]
    err = events[-1].data
    assert err["code"] == "billing_error" and err["retryable"] is False
    assert "admin must raise it" in err["message"] and "retrying will not help" in err["message"]
    assert message not in err["message"] and "Limit reached" not in err["message"]  # upstream text is logged only
    follow_up_works(alice, fake_llm, events[0].data["conversation_id"])


@pytest.mark.parametrize("where", ["http", "stream"])
def test_overloaded_before_any_text_is_retried(where: str, fast: Any, alice: TestClient, fake_llm: FakeAnthropic,
                                               db: Database) -> None:
    """An HTTP 529, or an `overloaded_error` event after message_start but before any text: retried by
    the loop (the SDK never retries after the 200), and the user is told."""
    first = Script.http_error(529, "overloaded_error", should_retry=None) if where == "http" else \
        Script.stream_error(Reply(blocks=[{"type": "text", "text": "never sent"}], input_tokens=BILLED),
                            after_blocks=0)
    fake_llm.script(first, Script.answer(Reply.text("Recovered.", input_tokens=BILLED, output_tokens=40)))
    events = chat(alice, "hi")
    assert len(fake_llm.requests) == 2
    assert types(events) == ["conversation", "status", "status", "text_delta", "usage", "context_update", "complete"]
    assert "retrying (2 of 3)" in events[2].data["message"]
    assert text_of(events) == "Recovered."
    usage_event = next(e.data for e in events if e.event == "usage")  # per call, as before
    assert (usage_event["input_tokens"], usage_event["output_tokens"]) == (BILLED, 40)
    stored = messages(db, events[0].data["conversation_id"])[1].extras["usage"]
    # the failed attempt was billed for its input (message_start) too; nothing is counted twice
    expected = (BILLED, 40) if where == "http" else (2 * BILLED, 41)
    assert (stored["input_tokens"], stored["output_tokens"]) == expected


def test_retries_are_bounded(fast: Any, alice: TestClient, fake_llm: FakeAnthropic) -> None:
    fake_llm.script(*[Script.http_error(529, "overloaded_error", should_retry=None)] * 3)
    events = chat(alice, "hi")
    assert len(fake_llm.requests) == 3, [e.data for e in events]
    assert types(events) == ["conversation", "status", "status", "status", "error"]
    assert events[-1].data["code"] == "overloaded_error" and events[-1].data["retryable"] is True
