"""Two app instances on one database behave as two uvicorn workers: Stop and "busy" work across them."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from starlette.testclient import TestClient

from backend.chat import turns
from backend.chat.service import ChatService
from backend.db.base import utcnow
from backend.db.models import Conversation
from backend.db.session import Database
from backend.main import create_app
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.fakes.fake_page import CONTEXT
from tests.sse import parse, parse_lines, stream_acting_midway

pytestmark = pytest.mark.usefixtures("test_registry")


@pytest.fixture
def other_worker(app: Any, settings: Any, alice: TestClient) -> Any:
    """Alice's session, served by a second app instance (another worker process in production)."""
    second = create_app(settings)
    second.state.chat.poll_seconds = 0.05
    app.state.chat.poll_seconds = 0.05
    client = TestClient(second, cookies=alice.cookies)
    client.__enter__()
    yield client
    client.__exit__(None, None, None)


def test_stop_from_another_worker(alice: TestClient, other_worker: TestClient, fake_llm: FakeAnthropic,
                                  db: Database) -> None:
    fake_llm.script(Script.slow("Partial. "))

    def busy_then_stop(conv_id: int) -> None:
        busy = other_worker.post("/api/chat/stream", json={"message": "again", "context": CONTEXT,
                                                           "conversation_id": conv_id})
        assert busy.status_code == 409
        assert other_worker.post(f"/api/conversations/{conv_id}/stop").json() == {"stopped": True}

    events, conv_id = stream_acting_midway(alice, {"message": "long", "context": CONTEXT}, busy_then_stop)
    assert events[-1].event == "complete" and events[-1].data["payload"]["status"] == "interrupted"
    with db.session() as s:
        conv = s.get(Conversation, conv_id)
        assert conv is not None and conv.active_turn_id is None and conv.stop_requested is False
    assert other_worker.post(f"/api/conversations/{conv_id}/stop").json() == {"stopped": False}
    fake_llm.script(Script.text("Back again."))
    r = other_worker.post("/api/chat/stream", json={"message": "again", "context": CONTEXT, "conversation_id": conv_id})
    assert r.status_code == 200 and "Back again." in r.text


def test_an_expired_lease_does_not_block_the_conversation(alice: TestClient, fake_llm: FakeAnthropic,
                                                         db: Database) -> None:
    fake_llm.script(Script.text("First."), Script.text("Second."))
    first = alice.post("/api/chat/stream", json={"message": "one", "context": CONTEXT})
    conv_id = parse(first.text)[0].data["conversation_id"]
    with db.session() as s:  # a worker died mid-turn a while ago
        conv = s.get(Conversation, conv_id)
        assert conv is not None
        conv.active_turn_id, conv.active_turn_expires_at = "dead" * 8, utcnow() - timedelta(seconds=1)
    r = alice.post("/api/chat/stream", json={"message": "two", "context": CONTEXT, "conversation_id": conv_id})
    assert r.status_code == 200 and "Second." in r.text


def test_the_watcher_sees_stop_from_another_worker_within_a_second(app: Any, alice: TestClient,
                                                                     other_worker: TestClient,
                                                                     fake_llm: FakeAnthropic) -> None:
    app.state.chat.poll_seconds = ChatService(app.state.db, app.state.llm).poll_seconds  # as in production
    fake_llm.script(Script.slow("Partial. "))
    stopped_at = ended_at = 0.0
    with alice.stream("POST", "/api/chat/stream", json={"message": "long", "context": CONTEXT}) as r:
        for event in parse_lines(r.iter_lines()):
            if event.event == "conversation":
                conv_id = event.data["conversation_id"]
            if event.event == "text_delta" and not stopped_at:
                assert other_worker.post(f"/api/conversations/{conv_id}/stop").json() == {"stopped": True}
                stopped_at = time.monotonic()
            if event.event in ("complete", "error"):
                ended_at = time.monotonic()
                assert event.data["payload"]["status"] == "interrupted"
    # The fake streams for ~10 s unless stopped; the watcher polls every half second for all of its worker's
    # turns, then the final save and the terminal event follow (bounded generously: the CI machine is shared).
    assert stopped_at and ended_at - stopped_at < 1.5, ended_at - stopped_at


def test_a_worker_renews_the_leases_of_its_running_turns(app: Any, alice: TestClient, other_worker: TestClient,
                                                         fake_llm: FakeAnthropic, db: Database,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A turn that runs longer than a lease keeps its conversation: its worker renews the lease (one UPDATE
    for all its turns), so another worker still finds the conversation busy after the first lease ran out."""
    monkeypatch.setattr(turns, "LEASE", timedelta(seconds=1))
    monkeypatch.setattr(turns, "RENEW_EVERY", timedelta(seconds=0.2))
    # The watcher renews on its poll ticks: scaled down with the lease, as production's 0.5 s poll is to its
    # 10 s lease (at 0.5 s a single slow tick let the 1 s lease lapse, and the other worker took the turn).
    monkeypatch.setattr(app.state.chat, "poll_seconds", 0.1)
    fake_llm.script(Script.slow("Still going. "))
    expiries = []
    started = 0.0
    with alice.stream("POST", "/api/chat/stream", json={"message": "long", "context": CONTEXT}) as r:
        for event in parse_lines(r.iter_lines()):
            if event.event == "conversation":
                conv_id = event.data["conversation_id"]
                started = time.monotonic()
            if event.event != "text_delta":
                continue
            with db.session() as s:
                conv = s.get(Conversation, conv_id)
                assert conv is not None and conv.active_turn_expires_at is not None
                expiries.append(conv.active_turn_expires_at)
            if time.monotonic() - started > 2.0:  # twice the lease
                busy = other_worker.post("/api/chat/stream", json={"message": "again", "context": CONTEXT,
                                                                   "conversation_id": conv_id})
                assert busy.status_code == 409
                assert other_worker.post(f"/api/conversations/{conv_id}/stop").json() == {"stopped": True}
                break
    assert len(set(expiries)) >= 5 and expiries == sorted(expiries)  # renewed again and again, only forward
    assert expiries[-1] > expiries[0] + timedelta(seconds=1)
