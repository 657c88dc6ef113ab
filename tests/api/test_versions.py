"""Regenerate and edit keep the earlier versions: rewind archives the tail, `versions/switch` brings one back
exactly (rows), forks inside an archived tail come back with it, and the next turn's history is the shown
path. Rows read on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from starlette.testclient import TestClient

from backend.chat import turns
from backend.db.models import ChatTurn, Message, MessageVersion
from backend.db.session import Database
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.fakes.fake_page import chat

pytestmark = pytest.mark.usefixtures("test_registry")


def _rows(db: Database, conv: int) -> list[tuple[Any, ...]]:
    """The conversation's messages as stored, without their ids (a restored version gets new ones)."""
    with db.session() as s:
        return [(m.role, m.content, m.context, m.extras, m.status, m.created_at)
                for m in s.scalars(sa.select(Message).where(Message.conversation_id == conv).order_by(Message.id))]


def _switch(client: TestClient, conv: int, message_id: int, version: int) -> Any:
    return client.post(f"/api/conversations/{conv}/versions/switch",
                       json={"message_id": message_id, "version": version})


def _texts(detail: dict[str, Any]) -> list[str]:
    return [m["content"] for m in detail["messages"]]


def _regenerate(client: TestClient, conv: int, message: dict[str, Any], text: str | None = None) -> None:
    r = client.post(f"/api/conversations/{conv}/rewind", json={"message_id": message["id"]})
    assert r.status_code == 200, r.text
    chat(client, text if text is not None else message["content"], conversation_id=conv)


def test_regenerate_keeps_the_first_answer_and_switching_restores_it_exactly(
        alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    fake_llm.script(Script.text("Intro."), Script.text('First answer. Card: TEST_CARD: {"title": "t"}'))
    conv = chat(alice, "hello")[0].data["conversation_id"]
    events = chat(alice, "question", conversation_id=conv)
    payload_id = events[-1].data["payload"]["payloads"][0]["id"]
    decided = alice.post(f"/api/conversations/{conv}/payloads/{payload_id}/decision", json={"decision": "accepted"})
    assert decided.status_code == 200
    first = alice.get(f"/api/conversations/{conv}").json()
    assert first["versions"] == []
    first_rows = _rows(db, conv)

    fake_llm.script(Script.text("Second answer."))
    _regenerate(alice, conv, first["messages"][2])
    second = alice.get(f"/api/conversations/{conv}").json()
    assert _texts(second) == ["hello", "Intro.", "question", "Second answer."]
    fork = second["messages"][2]["id"]
    assert second["versions"] == [{"message_id": fork, "current": 2, "count": 2}]
    second_rows = _rows(db, conv)
    with db.session() as s:
        archived = s.scalars(sa.select(MessageVersion)).all()
        assert [(v.conversation_id, v.position, v.version, v.parent_id) for v in archived] == [(conv, 2, 1, None)]
        assert [m["content"] for m in archived[0].messages] == ["question", first["messages"][3]["content"]]

    r = _switch(alice, conv, fork, 1)
    assert r.status_code == 200, r.text
    shown = r.json()
    assert _texts(shown) == _texts(first)
    assert shown["messages"][:2] == first["messages"][:2]  # the part before the fork keeps its ids
    assert shown["messages"][3]["extras"]["payloads"][0]["decision"] == "accepted"
    assert shown["versions"] == [{"message_id": shown["messages"][2]["id"], "current": 1, "count": 2}]
    assert _rows(db, conv) == first_rows
    assert alice.get(f"/api/conversations/{conv}").json() == shown

    # The next turn's history is the path shown: the first answer, not the second.
    fake_llm.script(Script.text("Follow-up."))
    chat(alice, "and then?", conversation_id=conv)
    sent = str(fake_llm.requests[-1]["messages"])
    assert "First answer." in sent and "Second answer." not in sent

    back = _switch(alice, conv, shown["messages"][2]["id"], 2).json()
    assert _texts(back) == _texts(second) and _rows(db, conv) == second_rows
    assert back["versions"][0]["current"] == 2 and back["versions"][0]["count"] == 2
    again = _switch(alice, conv, back["messages"][2]["id"], 1).json()  # the follow-up was kept in version 1
    assert _texts(again)[-2:] == ["and then?", "Follow-up."]
    with db.session() as s:
        assert s.scalar(sa.select(sa.func.count()).select_from(MessageVersion)) == 1
        assert s.scalar(sa.select(sa.func.count()).select_from(ChatTurn)) == 1  # hello's: the set-aside turns went


def test_an_edit_adds_a_third_version_and_forks_below_come_back_with_their_tail(
        alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    fake_llm.script(Script.text("A1."), Script.text("B1."))
    conv = chat(alice, "q1")[0].data["conversation_id"]
    chat(alice, "q2", conversation_id=conv)
    detail = alice.get(f"/api/conversations/{conv}").json()
    fake_llm.script(Script.text("B2."))
    _regenerate(alice, conv, detail["messages"][2], "q2 edited")
    detail = alice.get(f"/api/conversations/{conv}").json()
    assert _texts(detail) == ["q1", "A1.", "q2 edited", "B2."]
    fake_llm.script(Script.text("A2."), Script.text("A3."))
    _regenerate(alice, conv, detail["messages"][0])
    detail = alice.get(f"/api/conversations/{conv}").json()
    _regenerate(alice, conv, detail["messages"][0], "q1 edited")
    detail = alice.get(f"/api/conversations/{conv}").json()
    assert _texts(detail) == ["q1 edited", "A3."]
    assert detail["versions"] == [{"message_id": detail["messages"][0]["id"], "current": 3, "count": 3}]

    first = _switch(alice, conv, detail["messages"][0]["id"], 1).json()
    assert _texts(first) == ["q1", "A1.", "q2 edited", "B2."]
    assert [(v["message_id"], v["current"], v["count"]) for v in first["versions"]] == [
        (first["messages"][0]["id"], 1, 3), (first["messages"][2]["id"], 2, 2)]
    older = _switch(alice, conv, first["messages"][2]["id"], 1).json()
    assert _texts(older) == ["q1", "A1.", "q2", "B1."]
    second = _switch(alice, conv, older["messages"][0]["id"], 2).json()
    assert _texts(second) == ["q1", "A2."] and second["versions"][0] == {
        "message_id": second["messages"][0]["id"], "current": 2, "count": 3}
    back = _switch(alice, conv, second["messages"][0]["id"], 1).json()  # q2's fork kept the version shown
    assert _texts(back) == ["q1", "A1.", "q2", "B1."] and back["versions"][1]["current"] == 1

    assert alice.delete(f"/api/conversations/{conv}").status_code == 204
    with db.session() as s:  # a conversation's versions go with it
        assert s.scalar(sa.select(sa.func.count()).select_from(MessageVersion)) == 0


def test_switch_refusals(alice: TestClient, bob: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    fake_llm.script(Script.text("One."), Script.text("Two."))
    conv = chat(alice, "q")[0].data["conversation_id"]
    detail = alice.get(f"/api/conversations/{conv}").json()
    _regenerate(alice, conv, detail["messages"][0])
    detail = alice.get(f"/api/conversations/{conv}").json()
    fork, answer = detail["messages"][0]["id"], detail["messages"][1]["id"]
    rows = _rows(db, conv)

    assert _switch(bob, conv, fork, 1).status_code == 404  # another user's conversation does not exist
    for message_id, version in ((fork, 3), (answer, 1), (2**31 - 1, 1)):  # unknown version, no fork, no message
        r = _switch(alice, conv, message_id, version)
        assert r.status_code == 404 and r.json()["error"] == "not_found", (message_id, version)
    assert _switch(alice, conv, fork, 0).status_code == 422
    assert _switch(alice, conv, fork, 2).json() == detail  # the version shown: nothing changes
    with db.session() as s:
        assert turns.claim(s, conv, "a-running-turn")
    r = _switch(alice, conv, fork, 1)
    assert r.status_code == 409 and r.json()["error"] == "conflict"
    assert _rows(db, conv) == rows
    with db.session() as s:
        assert s.scalar(sa.select(sa.func.count()).select_from(MessageVersion)) == 1
