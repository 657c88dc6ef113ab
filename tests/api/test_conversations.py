"""Conversations are per user and per app; another user's conversation is 404 on every route."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from backend.chat import turns
from backend.db.models import Message
from backend.db.session import Database
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.fakes.fake_page import CONTEXT, chat
from tests.sse import parse

pytestmark = pytest.mark.usefixtures("test_registry")


def start(client: TestClient, fake: FakeAnthropic, context: dict[str, Any] | None = None,
          text: str = "Hi.") -> int:
    fake.script(Script.text(text))
    events = chat(client, "hello there", context=context)
    return int(events[0].data["conversation_id"])


def test_other_users_conversation_is_404_everywhere(alice: TestClient, bob: TestClient,
                                                   fake_llm: FakeAnthropic, db: Database) -> None:
    fake_llm.script(Script.text('Card: TEST_CARD: {"title": "t"}'))
    events = chat(alice, "card")
    conv = events[0].data["conversation_id"]
    payload_id = events[-1].data["payload"]["payloads"][0]["id"]
    calls = [
        ("GET", f"/api/conversations/{conv}", None),
        ("PATCH", f"/api/conversations/{conv}", {"title": "mine now"}),
        ("DELETE", f"/api/conversations/{conv}", None),
        ("POST", f"/api/conversations/{conv}/stop", None),
        ("POST", f"/api/conversations/{conv}/payloads/{payload_id}/decision", {"decision": "accepted"}),
        ("POST", f"/api/conversations/{conv}/rewind", {"message_id": events[0].data["user_message_id"]}),
        ("POST", "/api/chat/stream", {"message": "hijack", "context": CONTEXT, "conversation_id": conv}),
    ]
    for method, url, body in calls:
        r = bob.request(method, url, json=body)
        assert r.status_code == 404, (method, url, r.status_code)
        assert r.json()["error"] == "not_found"
    assert bob.get("/api/conversations?app=tablizer").json() == []
    detail = alice.get(f"/api/conversations/{conv}").json()
    assert detail["title"] == "card" and len(detail["messages"]) == 2
    assert detail["messages"][1]["extras"]["payloads"][0]["decision"] is None
    with db.session() as s:
        assert s.query(Message).filter_by(conversation_id=conv).count() == 2


def test_unknown_conversation_is_404_and_anonymous_is_401(app: Any, alice: TestClient) -> None:
    assert alice.get("/api/conversations/999").status_code == 404
    anon = TestClient(app)
    for method, url in [("GET", "/api/conversations"), ("GET", "/api/conversations/1"),
                        ("GET", "/api/pages"), ("GET", "/api/auth/me"), ("POST", "/api/conversations/1/stop")]:
        assert anon.request(method, url).status_code == 401, url
    r = anon.post("/api/chat/stream", json={"message": "hi", "context": {}})
    assert r.status_code == 401 and r.json() == {"error": "unauthorized", "detail": r.json()["detail"]}
    assert anon.get("/api/health").status_code == 200
    assert anon.get("/api/auth/session").json() == {"user": None}
    assert alice.get("/api/auth/session").json() == {"user": {"id": 1, "username": "alice", "role": "user"}}


def test_apps_are_isolated(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    tablizer = start(alice, fake_llm)  # test_page belongs to app tablizer
    kh = start(alice, fake_llm, context={"current_page": "edit_research_stream", "active_tab": "semantic"})
    unknown_page = start(alice, fake_llm, context={"current_page": "no_such_page"})
    fake_llm.script(Script.text("ok"))
    r = alice.post("/api/chat/stream", json={"message": "x", "context": {}, "app": "trialscout"})
    trialscout = parse(r.text)[0].data["conversation_id"]
    ids = {app: [c["id"] for c in alice.get(f"/api/conversations?app={app}").json()]
           for app in ("tablizer", "kh", "trialscout")}
    assert ids == {"tablizer": [tablizer], "kh": [unknown_page, kh], "trialscout": [trialscout]}
    assert alice.get("/api/conversations?app=nope").status_code == 422


def test_rename_delete_and_newest_first(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    first = start(alice, fake_llm)
    second = start(alice, fake_llm)
    assert [c["id"] for c in alice.get("/api/conversations?app=tablizer").json()] == [second, first]
    r = alice.patch(f"/api/conversations/{first}", json={"title": "  EGFR   notes "})
    assert r.status_code == 200 and r.json()["title"] == "EGFR notes"
    assert [c["id"] for c in alice.get("/api/conversations?app=tablizer").json()] == [first, second]
    assert alice.patch(f"/api/conversations/{first}", json={"title": "   "}).status_code == 422
    assert alice.delete(f"/api/conversations/{first}").status_code == 204
    assert alice.get(f"/api/conversations/{first}").status_code == 404
    assert [c["id"] for c in alice.get("/api/conversations?app=tablizer").json()] == [second]


def test_decisions_are_stored_and_told_to_the_model(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    fake_llm.script(Script.text('Try this.\nTEST_CARD: {"title": "EGFR resistance"}'))
    events = chat(alice, "suggest")
    conv = events[0].data["conversation_id"]
    payload_id = events[-1].data["payload"]["payloads"][0]["id"]
    r = alice.post(f"/api/conversations/{conv}/payloads/{payload_id}/decision", json={"decision": "accepted"})
    assert r.status_code == 200 and r.json()["decision"] == "accepted"
    assert alice.post(f"/api/conversations/{conv}/payloads/nope/decision",
                      json={"decision": "accepted"}).status_code == 404
    assert alice.post(f"/api/conversations/{conv}/payloads/{payload_id}/decision",
                      json={"decision": "maybe"}).status_code == 422
    stored = alice.get(f"/api/conversations/{conv}").json()["messages"][1]["extras"]["payloads"][0]
    assert stored["decision"] == "accepted" and stored["decided_at"]
    fake_llm.script(Script.text("Great."))
    chat(alice, "next", conversation_id=conv)
    last_user = fake_llm.requests[-1]["messages"][-1]["content"]
    assert last_user[0]["text"].startswith("[Card decisions on your previous answer]")
    assert "test_card card (EGFR resistance): accepted" in last_user[0]["text"]
    assert last_user[1]["text"].startswith("<page_context") and last_user[-1]["text"] == "next"


def test_bad_chat_requests_are_422(alice: TestClient) -> None:
    for body in ({"message": ""}, {"message": "   "}, {"context": {}}, {"message": "x", "app": "nope"},
                 {"message": "x", "context": {"blob": "y" * 300_000}}):
        r = alice.post("/api/chat/stream", json=body)
        assert r.status_code == 422 and r.json()["error"] == "invalid_input", body
    r = alice.post("/api/chat/stream", json={"message": "x", "context": {"blob": "y" * 2_100_000}})
    assert r.status_code == 413 and "larger than this route accepts (1 MB)" in r.json()["detail"]


def test_login_logout(app: Any, alice: TestClient) -> None:
    assert alice.get("/api/auth/me").json()["username"] == "alice"
    cookie = alice.cookies.get("colleague_session")
    assert cookie
    assert alice.post("/api/auth/logout").status_code == 200
    assert alice.get("/api/auth/me").status_code == 401
    stale = TestClient(app, cookies={"colleague_session": cookie})
    assert stale.get("/api/auth/me").status_code == 401  # the server forgot the session
    assert TestClient(app).post("/api/auth/login", json={"username": "alice", "password": "wrong"}).status_code == 401
    r = TestClient(app).post("/api/auth/login", json={"username": "alice", "password": "secret-pw"})
    assert "httponly" in r.headers["set-cookie"].lower()
    bearer = TestClient(app, headers={"Authorization": f"Bearer {r.cookies['colleague_session']}"})
    assert bearer.get("/api/auth/me").json()["username"] == "alice"


def test_rewind_drops_the_last_turn_so_it_can_be_sent_again(alice: TestClient, fake_llm: FakeAnthropic,
                                                            db: Database) -> None:
    """Edit-and-resend and regenerate: the last user message and its answer go, what stays is a history the
    Messages API accepts, and the next turn's request carries neither the dropped question nor its answer."""
    fake_llm.script(Script.text("First answer."), Script.text("Second answer."))
    first = chat(alice, "first question")
    conv = first[0].data["conversation_id"]
    second = chat(alice, "second question", conversation_id=conv)
    dropped = second[0].data["user_message_id"]
    kept = alice.get(f"/api/conversations/{conv}").json()["messages"][1]["id"]
    for bad in (kept, 2**31 - 1):  # an answer is not a user message; an unknown id
        assert alice.post(f"/api/conversations/{conv}/rewind", json={"message_id": bad}).status_code == 404
    assert alice.post(f"/api/conversations/{conv}/rewind", json={"message_id": 0}).status_code == 422
    r = alice.post(f"/api/conversations/{conv}/rewind", json={"message_id": dropped})
    assert r.status_code == 200, r.text
    assert [(m["role"], m["content"]) for m in r.json()["messages"]] == [
        ("user", "first question"), ("assistant", "First answer.")]
    with db.session() as s:
        assert s.query(Message).filter_by(conversation_id=conv).count() == 2
    fake_llm.script(Script.text("Edited answer."))
    events = chat(alice, "second question, edited", conversation_id=conv)
    assert events[-1].data["payload"]["message"] == "Edited answer."
    sent = fake_llm.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert "Second answer." not in str(sent) and "second question, edited" in str(sent[-1])
    assert all("second question" not in str(m) for m in sent[:-1])


def test_rewind_refuses_while_a_turn_runs(alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    conv = start(alice, fake_llm)
    user_message = alice.get(f"/api/conversations/{conv}").json()["messages"][0]["id"]
    with db.session() as s:
        assert turns.claim(s, conv, "a-running-turn")
    r = alice.post(f"/api/conversations/{conv}/rewind", json={"message_id": user_message})
    assert r.status_code == 409 and r.json()["error"] == "conflict"
    assert len(alice.get(f"/api/conversations/{conv}").json()["messages"]) == 2
