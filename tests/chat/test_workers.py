"""Two app instances on one database behave as two uvicorn workers: Stop and "busy" work across them."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from starlette.testclient import TestClient

from backend.db.base import utcnow
from backend.db.models import Conversation
from backend.db.session import Database
from backend.main import create_app
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.fakes.fake_page import CONTEXT
from tests.sse import parse, parse_lines

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
    events = []
    with alice.stream("POST", "/api/chat/stream", json={"message": "long", "context": CONTEXT}) as r:
        for event in parse_lines(r.iter_lines()):
            events.append(event)
            if event.event == "conversation":
                conv_id = event.data["conversation_id"]
            if event.event == "text_delta" and sum(e.event == "text_delta" for e in events) == 2:
                busy = other_worker.post("/api/chat/stream", json={"message": "again", "context": CONTEXT,
                                                                   "conversation_id": conv_id})
                assert busy.status_code == 409
                assert other_worker.post(f"/api/conversations/{conv_id}/stop").json() == {"stopped": True}
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
