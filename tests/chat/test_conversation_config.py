"""Per-conversation model settings (`config_update` → `config_ack`) and the context meter (`context_update`),
through the HTTP API with the real SDK over the fake Messages API."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from backend.db.models import Conversation, Message
from backend.db.session import Database
from backend.demo.wire import Reply
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.fakes.fake_page import CONTEXT, chat

pytestmark = pytest.mark.usefixtures("test_registry")


def new_conversation(client: TestClient, fake: FakeAnthropic, **body: Any) -> int:
    fake.script(Script.text("First answer."))
    r = client.post("/api/chat/stream", json={"message": "hello", "context": CONTEXT, **body})
    assert r.status_code == 200, r.text
    return int(r.text.split('"conversation_id": ')[1].split(",")[0])


def test_models_offer_the_configured_choices_with_the_spec_defaults(alice: TestClient) -> None:
    r = alice.get("/api/chat/models")
    assert r.status_code == 200
    body = r.json()
    assert [(m["id"], m["label"]) for m in body["models"]] == [
        ("claude-sonnet-4-6", "Sonnet 4.6"), ("claude-opus-4-6", "Opus 4.6"), ("claude-haiku-4-5", "Haiku 4.5")]
    assert body["default"] == {"model": "claude-sonnet-4-6", "model_label": "Sonnet 4.6",
                               "max_tokens": 16384, "compaction": True, "context_window": 200000}
    assert body["demo"] is False


def test_a_new_conversation_uses_the_default_max_tokens(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    new_conversation(alice, fake_llm)
    assert fake_llm.requests[0]["model"] == "claude-sonnet-4-6"
    assert fake_llm.requests[0]["max_tokens"] == 16384


def test_config_update_is_stored_acknowledged_and_used_by_the_next_turn(
        alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    conv_id = new_conversation(alice, fake_llm)
    r = alice.patch(f"/api/conversations/{conv_id}/config",
                    json={"model": "claude-opus-4-6", "max_tokens": 2000, "compaction": False})
    assert r.status_code == 200, r.text
    assert r.json() == {"type": "config_ack", "conversation_id": conv_id, "model": "claude-opus-4-6",
                        "model_label": "Opus 4.6", "max_tokens": 2000, "compaction": False,
                        "context_window": 200000}
    with db.session() as s:
        row = s.get(Conversation, conv_id)
        assert row is not None and (row.model, row.max_tokens, row.compaction) == ("claude-opus-4-6", 2000, False)
    assert alice.get(f"/api/conversations/{conv_id}/config").json()["model"] == "claude-opus-4-6"

    fake_llm.script(Script.text("Opus here."))
    events = chat(alice, "again", conversation_id=conv_id)
    assert fake_llm.requests[-1]["model"] == "claude-opus-4-6"
    assert fake_llm.requests[-1]["max_tokens"] == 2000
    meter = next(e.data for e in events if e.event == "context_update")
    assert meter["model"] == "claude-opus-4-6" and meter["compaction"] is False and meter["turns"] == 2
    with db.session() as s:
        answer = (s.query(Message).filter_by(conversation_id=conv_id, role="assistant")
                  .order_by(Message.id.desc()).first())
        assert answer is not None and answer.extras["model"] == "claude-opus-4-6"

    # A partial update keeps the rest.
    assert alice.patch(f"/api/conversations/{conv_id}/config", json={"max_tokens": 4096}).json()["model"] == \
        "claude-opus-4-6"


def test_settings_sent_with_the_first_message_shape_that_turn(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    conv_id = new_conversation(alice, fake_llm, config={"model": "claude-haiku-4-5", "max_tokens": 1024})
    assert (fake_llm.requests[0]["model"], fake_llm.requests[0]["max_tokens"]) == ("claude-haiku-4-5", 1024)
    assert alice.get(f"/api/conversations/{conv_id}/config").json()["model"] == "claude-haiku-4-5"


def test_bad_settings_are_refused_and_others_conversations_are_404(
        alice: TestClient, bob: TestClient, fake_llm: FakeAnthropic) -> None:
    conv_id = new_conversation(alice, fake_llm)
    r = alice.patch(f"/api/conversations/{conv_id}/config", json={"model": "gpt-4"})
    assert r.status_code == 422 and "not available" in r.json()["detail"] and "claude-opus-4-6" in r.json()["detail"]
    assert alice.patch(f"/api/conversations/{conv_id}/config", json={"max_tokens": 10}).status_code == 422
    assert alice.patch(f"/api/conversations/{conv_id}/config", json={"temperature": 1}).status_code == 422
    r = alice.post("/api/chat/stream", json={"message": "x", "context": CONTEXT, "config": {"model": "nope"}})
    assert r.status_code == 422
    assert bob.get(f"/api/conversations/{conv_id}/config").status_code == 404
    assert bob.patch(f"/api/conversations/{conv_id}/config", json={"model": "claude-opus-4-6"}).status_code == 404
    assert alice.get(f"/api/conversations/{conv_id}/config").json()["model"] == "claude-sonnet-4-6"


def test_compaction_off_sends_the_whole_history(alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    conv_id = new_conversation(alice, fake_llm)
    with db.session() as s:  # a long conversation: 60 more stored messages
        for i in range(30):
            s.add(Message(conversation_id=conv_id, role="user", content=f"question {i}", status="complete"))
            s.add(Message(conversation_id=conv_id, role="assistant", content=f"answer {i}", status="complete"))
    fake_llm.script(Script.text("Trimmed."))
    chat(alice, "long", conversation_id=conv_id)
    assert len(fake_llm.requests[-1]["messages"]) < 45  # compaction on: trimmed
    alice.patch(f"/api/conversations/{conv_id}/config", json={"compaction": False})
    fake_llm.script(Script.text("Whole."))
    chat(alice, "longer", conversation_id=conv_id)
    sent = fake_llm.requests[-1]["messages"]
    assert len(sent) == 65 and sent[0]["content"][-1]["text"] == "hello"


def test_context_update_carries_the_last_requests_input_not_the_sum(
        alice: TestClient, fake_llm: FakeAnthropic) -> None:
    fake_llm.script(
        Script.answer(Reply.tool("lookup", {"q": "egfr"}, preface="Checking.", input_tokens=2644,
                                 cache_read_input_tokens=0, output_tokens=20)),
        Script.answer(Reply.text("Done.", input_tokens=300, cache_read_input_tokens=4000,
                                 cache_creation_input_tokens=634, output_tokens=10)))
    events = chat(alice, "tool turn")
    assert [e.event for e in events][-2:] == ["context_update", "complete"]
    meter = events[-2].data
    assert meter == {"input_tokens": 4934, "context_window": 200000, "model": "claude-sonnet-4-6", "turns": 1,
                     "compaction": True, "type": "context_update"}
    usage = events[-1].data["payload"]["usage"]
    assert usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"] == 7578
    conv_id = events[0].data["conversation_id"]
    stored = alice.get(f"/api/conversations/{conv_id}").json()["messages"][-1]["extras"]
    assert stored["context_usage"]["input_tokens"] == 4934


def test_no_context_update_when_the_model_never_answered(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    fake_llm.script(Script.http_error(400, "invalid_request_error"))
    events = chat(alice, "fails")
    assert "context_update" not in [e.event for e in events] and events[-1].event == "error"


def test_without_a_key_the_demo_model_is_the_only_choice(db_url: str, db: Database) -> None:
    from backend.main import create_app
    from tests.conftest import make_settings, signed_in

    client = signed_in(create_app(make_settings(db_url)), db, "dana")
    try:
        body = client.get("/api/chat/models").json()
        assert [(m["id"], m["label"]) for m in body["models"]] == [("colleague-demo-1", "demo model")]
        assert body["demo"] is True and body["default"]["max_tokens"] == 16384
        r = client.post("/api/chat/stream", json={"message": "hi", "context": CONTEXT,
                                                  "config": {"model": "claude-opus-4-6"}})
        assert r.status_code == 422 and "colleague-demo-1" in r.json()["detail"]
    finally:
        client.__exit__(None, None, None)
