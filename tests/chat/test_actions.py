"""Suggested actions act: the client actions a page declares are the ones its answers may offer, and a
clicked server action goes back to the server as that action (checked against the offer), not as text."""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from backend.db.models import Message
from backend.db.session import Database
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.fakes.fake_page import CONTEXT, chat
from tests.sse import parse, types

pytestmark = pytest.mark.usefixtures("test_registry")

OPEN = {"label": "Open trial", "action": "open_trial", "handler": "client", "data": {"nct_id": "NCT01234567"}}
UNDECLARED = {"label": "Run query", "action": "run_query", "handler": "client"}
SUMMARISE = {"label": "Summarise the top 3", "action": "summarise_results", "handler": "server",
             "data": {"top": 3}}


def offer(client: TestClient, fake: FakeAnthropic, actions: list[dict[str, Any]]) -> dict[str, Any]:
    fake.script(Script.text(f"Here you go.\nSUGGESTED_ACTIONS: {json.dumps(actions)}\n"))
    events = chat(client, "what next?")
    assert types(events)[-1] == "complete"
    payload: dict[str, Any] = events[-1].data["payload"]
    return payload


def test_a_client_action_the_page_does_not_declare_is_dropped_with_a_reason(
        alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    done = offer(alice, fake_llm, [OPEN, UNDECLARED, SUMMARISE])
    assert done["suggested_actions"] == [OPEN, SUMMARISE]
    with db.session() as s:
        stored = s.get(Message, done["message_id"])
        assert stored is not None
        assert stored.extras["payload_errors"] == [
            "suggested_actions: 'run_query' is not a client action of this page; dropped"]
    read = alice.get(f"/api/conversations/{done['conversation_id']}").json()
    assert read["messages"][1]["extras"]["suggested_actions"] == [OPEN, SUMMARISE]


def test_the_prompt_lists_the_page_client_actions_with_their_data(alice: TestClient,
                                                                  fake_llm: FakeAnthropic) -> None:
    offer(alice, fake_llm, [])
    system = fake_llm.requests[-1]["system"][0]["text"]
    assert 'Client actions on this page:\n- open_trial (data: {"nct_id": …}): Open a trial\'s detail view' in system


def test_a_clicked_server_action_reaches_the_model_as_that_action(alice: TestClient, fake_llm: FakeAnthropic,
                                                                  db: Database) -> None:
    done = offer(alice, fake_llm, [OPEN, SUMMARISE])
    conv = done["conversation_id"]
    fake_llm.script(Script.text("The top 3 are…"))
    r = alice.post("/api/chat/stream", json={
        "message": SUMMARISE["label"], "context": CONTEXT, "conversation_id": conv,
        "action": {"action": "summarise_results", "data": {"top": 3}}})
    assert r.status_code == 200, r.text
    assert types(parse(r.text))[-1] == "complete"
    sent = fake_llm.requests[-1]["messages"][-1]["content"][-1]["text"]
    assert sent == ('[The user clicked your suggested action "Summarise the top 3" (server action '
                    '`summarise_results` with data {"top": 3}). Carry it out now.]')
    user = alice.get(f"/api/conversations/{conv}").json()["messages"][2]
    assert user["role"] == "user" and user["content"] == "Summarise the top 3"
    assert user["extras"]["action"] == SUMMARISE
    # The next turn replays the click exactly as the model first read it (the prompt prefix holds).
    fake_llm.script(Script.text("And more."))
    chat(alice, "thanks", conversation_id=conv)
    assert fake_llm.requests[-1]["messages"][2]["content"][-1]["text"] == sent
    assert not fake_llm.violations


@pytest.mark.parametrize(("action", "why"), [
    ({"action": "summarise_results", "data": {"top": 4}}, "was not offered"),  # other data than offered
    ({"action": "open_trial", "data": {"nct_id": "NCT01234567"}}, "was not offered"),  # a client action
    ({"action": "delete_everything"}, "was not offered"),
    ({"action": "summarise_results", "data": {"top": {"deep": 1}}}, "action data"),
])
def test_an_action_that_was_not_offered_is_refused(alice: TestClient, fake_llm: FakeAnthropic,
                                                    action: dict[str, Any], why: str) -> None:
    conv = offer(alice, fake_llm, [OPEN, SUMMARISE])["conversation_id"]
    calls = len(fake_llm.requests)
    r = alice.post("/api/chat/stream", json={"message": "Go", "context": CONTEXT, "conversation_id": conv,
                                             "action": action})
    assert r.status_code == 422 and why in r.json()["detail"], r.text
    assert len(fake_llm.requests) == calls
    assert len(alice.get(f"/api/conversations/{conv}").json()["messages"]) == 2
    fake_llm.script(Script.text("Still here."))
    assert types(chat(alice, "ok", conversation_id=conv))[-1] == "complete"  # the refusal left no lease


def test_an_action_needs_the_conversation_that_offered_it(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    r = alice.post("/api/chat/stream", json={"message": "Go", "context": CONTEXT,
                                             "action": {"action": "summarise_results"}})
    assert r.status_code == 422 and "conversation_id is required" in r.json()["detail"]
    assert fake_llm.requests == []


def test_an_offer_without_data_matches_a_click_with_empty_data(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    conv = offer(alice, fake_llm, [{"label": "More", "action": "more", "handler": "server"}])["conversation_id"]
    fake_llm.script(Script.text("More."))
    r = alice.post("/api/chat/stream", json={"message": "More", "context": CONTEXT, "conversation_id": conv,
                                             "action": {"action": "more", "data": {}}})
    assert r.status_code == 200, r.text
    assert fake_llm.requests[-1]["messages"][-1]["content"][-1]["text"].startswith(
        '[The user clicked your suggested action "More" (server action `more`). ')
