"""Durable turns through the public API, in process: a double submit is one
turn; resuming after k events gives events k+1.. exactly — on the same worker, on another worker (a
second app on the same database) and after the turn ended (no model call)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from starlette.testclient import TestClient

from backend.db.models import ChatTurn, Conversation, Message
from backend.db.session import Database
from backend.demo.wire import Reply
from backend.main import create_app
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.fakes.fake_page import CONTEXT
from tests.sse import Event, parse, parse_lines

pytestmark = pytest.mark.usefixtures("test_registry")

LONG = " ".join(f"word{i}" for i in range(600))  # 200 text deltas of three words


@pytest.fixture
def other_worker(app: Any, settings: Any, alice: TestClient) -> Any:
    """Alice's session, served by a second app instance (another worker process in production)."""
    second = create_app(settings)
    client = TestClient(second, cookies=alice.cookies)
    client.__enter__()
    yield client
    client.__exit__(None, None, None)


def keyed(client: TestClient, key: str, message: str = "just once") -> tuple[int, list[Event]]:
    r = client.post("/api/chat/stream", json={"message": message, "context": CONTEXT},
                    headers={"Idempotency-Key": key})
    return r.status_code, parse(r.text) if r.status_code == 200 else []


def as_tuples(events: list[Event]) -> list[tuple[str | None, str, dict[str, Any]]]:
    return [(e.id, e.event, e.data) for e in events]


def test_a_double_submit_is_one_turn(alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    fake_llm.script(Script.answer(Reply.text(LONG), delay=0.005))
    together = threading.Barrier(2)
    results: list[tuple[int, list[Event]]] = []

    def send() -> None:
        together.wait(5)
        results.append(keyed(alice, "send-1"))

    senders = [threading.Thread(target=send) for _ in range(2)]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join(60)
    assert [status for status, _ in results] == [200, 200]
    first, second = (events for _, events in results)
    assert as_tuples(first) == as_tuples(second)  # the second attached to the first's turn, from event 1
    assert first[-1].event == "complete" and first[-1].data["payload"]["message"] == LONG
    assert len(fake_llm.requests) == 1
    with db.session() as s:
        assert s.query(Conversation).count() == 1 and s.query(ChatTurn).count() == 1
        assert [m.role for m in s.query(Message).order_by(Message.id)] == ["user", "assistant"]

    status, replay = keyed(alice, "send-1")  # the same send again, after it completed
    assert status == 200 and as_tuples(replay) == as_tuples(first)
    assert len(fake_llm.requests) == 1
    r = alice.post("/api/chat/stream", json={"message": "something else", "context": CONTEXT},
                   headers={"Idempotency-Key": "send-1"})
    assert r.status_code == 422 and "Idempotency-Key" in r.json()["detail"]
    with db.session() as s:
        assert s.query(Message).count() == 2


def read_then_leave(client: TestClient, k: int) -> tuple[int, list[Event]]:
    """Start a turn, read its first k events, hang up."""
    with client.stream("POST", "/api/chat/stream", json={"message": "long please", "context": CONTEXT}) as r:
        assert r.status_code == 200
        events: list[Event] = []
        for event in parse_lines(r.iter_lines()):
            events.append(event)
            if len(events) == k:
                break
    return events[0].data["conversation_id"], events


def resume(client: TestClient, conversation_id: int, last_event_id: int) -> list[Event]:
    r = client.get(f"/api/conversations/{conversation_id}/stream", headers={"Last-Event-ID": str(last_event_id)})
    assert r.status_code == 200, r.text
    return parse(r.text)


def assert_continues(events: list[Event], k: int, whole: list[Event]) -> None:
    ids = [int(e.id or 0) for e in events]
    assert ids == list(range(k + 1, k + 1 + len(ids))), ids[:5]  # contiguous from k+1: no gap, no duplicate
    assert events[-1].event == "complete"
    assert as_tuples(events) == as_tuples(whole[k:])


@pytest.mark.parametrize("k", [1, 7, 40])
def test_resume_after_k_events(k: int, alice: TestClient, other_worker: TestClient, fake_llm: FakeAnthropic,
                               db: Database) -> None:
    fake_llm.script(Script.answer(Reply.text(LONG), delay=0.01))
    conv_id, seen = read_then_leave(alice, k)
    assert [int(e.id or 0) for e in seen] == list(range(1, k + 1))
    here = resume(alice, conv_id, k)  # on the worker that runs the turn, while it runs
    elsewhere = resume(other_worker, conv_id, k)  # on another worker: from the database
    whole = resume(other_worker, conv_id, 0)  # after it ended: the stored log, replayed
    assert as_tuples(whole[:k]) == as_tuples(seen)
    assert whole[-1].data["payload"]["message"] == LONG
    for events in (here, elsewhere, resume(other_worker, conv_id, k), resume(alice, conv_id, k)):
        assert_continues(events, k, whole)
    assert len(fake_llm.requests) == 1  # resuming never generates
    with db.session() as s:
        assert [m.role for m in s.query(Message).filter_by(conversation_id=conv_id)] == ["user", "assistant"]


@pytest.mark.parametrize("script", ["answer", "failure"])
def test_a_finished_turn_whose_events_were_purged_still_ends_its_reader(
        app: Any, alice: TestClient, fake_llm: FakeAnthropic, db: Database, script: str) -> None:
    """After the retention purge, a reader of a finished turn gets its end rebuilt from the stored answer
    (the text, or the stored error with whether to retry), not an endless poll."""
    import asyncio
    from datetime import timedelta

    from backend.chat import turns
    from backend.db.base import utcnow

    fake_llm.script(Script.text("The whole answer.") if script == "answer"
                    else Script.http_error(400, "invalid_request_error"))
    r = alice.post("/api/chat/stream", json={"message": "hi", "context": CONTEXT})
    events = parse(r.text)
    turn_id = events[0].data["turn_id"]
    with db.session() as s:
        turns.purge_events(s, utcnow() + timedelta(days=1))
        assert s.get(ChatTurn, turn_id).last_event_id == len(events)

    async def read_all() -> list[Any]:
        return [f async for f in app.state.chat.read(turn_id, 1)]

    frames = asyncio.run(asyncio.wait_for(read_all(), 10))
    assert [(f.id, f.type) for f in frames] == [(2, events[-1].event)]
    if script == "answer":
        assert frames[0].data["payload"]["message"] == "The whole answer."
        assert frames[0].data["payload"]["status"] == "complete"
    else:
        assert frames[0].data["code"] == events[-1].data["code"] and frames[0].data["retryable"] is False
        assert frames[0].data["message"] == events[-1].data["message"]
