"""Cards from the model are bounded: a hostile or careless marker loses its card, never the turn.

Each test drives a turn through `POST /api/chat/stream` against the fake Messages API, then reads the
conversation back over HTTP and sends a follow-up turn (the conversation must not stay locked)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from backend.db.models import Message
from backend.db.session import Database
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.fakes.fake_page import CONTEXT, chat
from tests.sse import Event, parse, text_of, types

pytestmark = pytest.mark.usefixtures("test_registry")

BEFORE = "Here is what I found."
AFTER = "The prose after the card stands."
MAX_EVENT_BYTES = 256 * 1024


def card_turn(client: TestClient, fake: FakeAnthropic, card_json: str, marker: str = "TEST_CARD:"
              ) -> tuple[list[Event], list[bytes]]:
    """One turn whose answer holds `marker card_json` between two paragraphs; the events and raw frames."""
    fake.script(Script.text(f"{BEFORE}\n\n{marker} {card_json}\n\n{AFTER}"))
    r = client.post("/api/chat/stream", json={"message": "card please", "context": CONTEXT})
    assert r.status_code == 200
    return parse(r.text), [f.encode() for f in r.text.replace("\r\n", "\n").split("\n\n") if f.strip()]


def assert_card_dropped(client: TestClient, fake: FakeAnthropic, db: Database, events: list[Event],
                        error: str) -> dict[str, Any]:
    """The turn completed with its prose and without the card; the conversation reads back and continues."""
    assert types(events)[-1] == "complete", [e.event for e in events][-3:]
    done = events[-1].data["payload"]
    assert done["status"] == "complete" and done["payloads"] == []
    assert BEFORE in done["message"] and AFTER in done["message"] and "TEST_CARD" not in done["message"]
    streamed = text_of(events)
    assert BEFORE in streamed and AFTER in streamed and "TEST_CARD" not in streamed and "[[" not in streamed
    conv_id = done["conversation_id"]
    with db.session() as s:
        stored = s.get(Message, done["message_id"])
        assert stored is not None
        errors = stored.extras["payload_errors"]
    assert len(errors) == 1 and error in errors[0] and len(errors[0]) < 300, errors
    read = client.get(f"/api/conversations/{conv_id}")
    assert read.status_code == 200, read.text[:300]
    assert [m["role"] for m in read.json()["messages"]] == ["user", "assistant"]
    assert read.json()["messages"][1]["extras"]["payloads"] == []
    fake.script(Script.text("Follow-up answer."))
    follow = chat(client, "and then?", conversation_id=conv_id)  # not 409: the turn's lease was released
    assert types(follow)[-1] == "complete" and not fake.violations
    return done


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [500, 1000])
def test_deeply_nested_card_is_dropped(alice: TestClient, fake_llm: FakeAnthropic, db: Database,
                                       depth: int) -> None:
    events, _ = card_turn(alice, fake_llm, f'{{"title": "deep", "nested": {nested(depth)}}}')
    assert_card_dropped(alice, fake_llm, db, events, "nested deeper than 32 levels")


def test_card_at_the_depth_limit_is_kept(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    events, _ = card_turn(alice, fake_llm, f'{{"title": "deep", "nested": {nested(31)}}}')
    done = events[-1].data["payload"]
    assert [p["data"]["title"] for p in done["payloads"]] == ["deep"] and AFTER in done["message"]
    events, _ = card_turn(alice, fake_llm, f'{{"title": "deep", "nested": {nested(32)}}}')
    assert events[-1].data["payload"]["payloads"] == []


def test_megabyte_explanation_is_refused_and_no_event_is_huge(alice: TestClient, fake_llm: FakeAnthropic,
                                                             db: Database) -> None:
    card = json.dumps({"title": "big", "explanation": "x" * 1_000_000})
    events, frames = card_turn(alice, fake_llm, card)
    assert_card_dropped(alice, fake_llm, db, events, "larger than 64 KB")
    assert max(len(f) for f in frames) < MAX_EVENT_BYTES


def test_long_field_is_refused_with_a_short_reason(alice: TestClient, fake_llm: FakeAnthropic,
                                                  db: Database) -> None:
    """Under the size limit, a string field whose schema sets no maxLength still has the default cap."""
    card = json.dumps({"title": "y" * 20_000})
    events, _ = card_turn(alice, fake_llm, card)
    done = assert_card_dropped(alice, fake_llm, db, events, "is too long")
    with db.session() as s:
        stored = s.get(Message, done["message_id"])
        assert stored is not None and "y" * 50 not in stored.extras["payload_errors"][0]


@pytest.mark.parametrize(("value", "error"), [
    ("NaN", "invalid JSON"),
    ("-Infinity", "invalid JSON"),
    ("1e400", "invalid JSON"),
    ("1" * 5000, "invalid JSON"),
    ('"\\ud800 unpaired"', "unpaired surrogate"),
])
def test_values_that_cannot_be_stored_or_sent_are_refused(alice: TestClient, fake_llm: FakeAnthropic,
                                                          db: Database, value: str, error: str) -> None:
    events, _ = card_turn(alice, fake_llm, f'{{"title": "odd", "score": {value}}}')
    assert_card_dropped(alice, fake_llm, db, events, error)


def test_suggested_actions_data_is_bounded(alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    flat = {"label": "Open", "action": "open_trial", "handler": "client", "data": {"nct_id": "NCT01234567"}}
    deep = {"label": "Deep", "action": "open_trial", "handler": "client", "data": {"a": {"b": {"c": 1}}}}
    wide = {"label": "Wide", "action": "open_trial", "handler": "client",
            "data": {f"k{i}": "v" for i in range(40)}}
    fake_llm.script(Script.text(f"{BEFORE}\nSUGGESTED_ACTIONS: {json.dumps([flat])}\n"
                                f"SUGGESTED_ACTIONS: {json.dumps([deep])}\n"
                                f"SUGGESTED_ACTIONS: {json.dumps([wide])}\n"
                                f"SUGGESTED_ACTIONS: [{{\"label\": \"Deeper\", \"action\": \"x\", "
                                f"\"handler\": \"client\", \"data\": {{\"a\": {nested(600)}}}}}]\n{AFTER}"))
    events = chat(alice, "actions please")
    assert types(events)[-1] == "complete"
    done = events[-1].data["payload"]
    assert done["suggested_actions"] == [flat] and AFTER in done["message"]
    with db.session() as s:
        stored = s.get(Message, done["message_id"])
        assert stored is not None
        errors = stored.extras["payload_errors"]
    assert [e.split(":")[0] for e in errors] == ["suggested_actions"] * 3
    assert "nested deeper than 32 levels" in errors[2]
    assert alice.get(f"/api/conversations/{done['conversation_id']}").status_code == 200
