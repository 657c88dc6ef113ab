"""What a deleted patient leaves after its own turns: a later turn that quotes it with the patient unloaded
(or another one loaded), a tool call elsewhere naming one of its screenings, and an answer still being
written when the patient is deleted. Through the HTTP API with the real SDK against the fake Messages API,
on SQLite and PostgreSQL; every row of messages, turn_events and chat_turns is read back as text."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from starlette.testclient import TestClient

from backend.conversations.forget import REDACTED_ANSWER, REDACTED_QUESTION
from backend.db.models.conversations import Message
from backend.db.session import Database
from backend.main import create_app
from tests.conftest import make_settings, signed_in_for_test
from tests.fakes.anthropic_server import FakeAnthropic, Script, tool_reply
from tests.screening_api.conftest import TRIALS, ScriptedModel
from tests.screening_chat.conftest import Screened, Turn, ask, context, screened
from tests.sse import parse

QUOTES = ("Tromsø", "March 2026")  # in the deleted patient's note only (the scripted profile is shared)
OTHER_NOTE = ("0. A 45-year-old man with metastatic melanoma, lives in Bergen. "
              "1. He progressed on nivolumab in May 2025. 2. ECOG performance status 0.")


@pytest.fixture
def client(db_url: str, db: Database, fake_llm: FakeAnthropic, model: ScriptedModel) -> Iterator[TestClient]:
    """Alice, with the app's model the fake Messages API (its judge: the scripted model)."""
    app = create_app(make_settings(db_url, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_llm.url))
    yield from signed_in_for_test(app, db, "alice")


def _messages(db: Database, conversation_id: int) -> list[tuple[str, str]]:
    with db.session() as s:
        return [(r.role, r.content) for r in s.execute(sa.text(
            "SELECT role, content FROM messages WHERE conversation_id = :c ORDER BY id"), {"c": conversation_id})]


def _quoted(db: Database, words: tuple[str, ...] = QUOTES) -> dict[str, int]:
    """Rows of the chat's tables holding any of the words, every column read back as text."""
    found = {}
    with db.session() as s:
        for table in ("messages", "turn_events", "chat_turns", "conversations", "reports"):
            rows = s.execute(sa.text(f"SELECT * FROM {table}")).mappings().all()
            found[table] = sum(any(w in json.dumps(dict(r), default=str, ensure_ascii=False) for w in words)
                               for r in rows)
    return {t: n for t, n in found.items() if n}


def _report(client: TestClient, conversation_id: int, nct: str) -> dict[str, Any]:
    """A TrialScout shortlist report whose summary is the conversation's newest answer."""
    r = client.post("/api/reports", json={
        "app": "trialscout", "title": "Shortlist", "conversation_id": conversation_id,
        "columns": [{"key": "nct_id", "label": "NCT ID"}, {"key": "fit", "label": "Fit"}],
        "rows": [{"nct_id": nct, "fit": "ELIGIBLE"}]})
    assert r.status_code == 200, r.text
    events = parse(r.text)
    assert events[-1].event == "report_ready", events
    return events[-1].data["report"]  # type: ignore[no-any-return]


def _ask(client: TestClient, fake: FakeAnthropic, question: str, ctx: dict[str, Any], conversation: int | None,
         *scripts: Script) -> Turn:
    fake.script(*scripts)
    turn = ask(client, question, ctx, conversation)
    assert turn.complete["status"] == "complete", turn.events
    return turn


def test_later_quotes_and_tools_naming_its_screening_go_with_the_patient(
        client: TestClient, db: Database, fake_llm: FakeAnthropic) -> None:
    done, other = screened(client, TRIALS), screened(client, TRIALS, note=OTHER_NOTE)
    nct, sid = done.shortlist[0]["nct_id"], done.detail["id"]
    conv = _ask(client, fake_llm, "What can you help me with?", context(None), None,
                Script.text("Searching trials and explaining screenings.")).complete["conversation_id"]
    about = _ask(client, fake_llm, f"Why is {nct} a fit?", context(done), conv,
                 Script.answer(tool_reply("get_screening_trial", {"nct_id": nct})),
                 Script.text("She lives in Tromsø; the site is near."))
    assert about.tools == ["get_screening_trial"]
    _ask(client, fake_llm, "What did you say about where she lives?", context(None), conv,
         Script.text("That she lives in Tromsø and progressed in March 2026."))
    quoting = _report(client, conv, nct)
    assert "Tromsø" in client.get(quoting["html_url"]).text
    _ask(client, fake_llm, "And him?", context(other), conv, Script.text("He is ECOG 0."))
    # Another conversation, about the other patient: one turn's tool reads the deleted patient's screening.
    elsewhere = _ask(client, fake_llm, "How is he?", context(other), None,
                     Script.text("Stable.")).complete["conversation_id"]
    kept = _report(client, elsewhere, nct)
    _ask(client, fake_llm, "Compare with the earlier screening", context(other), elsewhere,
         Script.answer(tool_reply("get_screening_trial", {"nct_id": nct, "screening_id": sid})),
         Script.text("That one was another patient's."))
    _ask(client, fake_llm, "Thanks", context(other), elsewhere, Script.text("You're welcome."))
    assert set(_quoted(db)) >= {"messages", "turn_events"}
    before = {c: _messages(db, c) for c in (conv, elsewhere)}
    titles = {c: client.get(f"/api/conversations/{c}").json()["title"] for c in (conv, elsewhere)}

    assert client.delete(f"/api/patients/{done.patient['id']}").status_code == 204

    assert _quoted(db) == {}
    # The report that quoted her goes (HTML and PDF); the other stays.
    assert [r["id"] for r in client.get("/api/reports").json()] == [kept["id"]]
    assert client.get(quoting["pdf_url"]).status_code == 404
    assert client.get(kept["pdf_url"]).status_code == 200
    placeholders = [("user", REDACTED_QUESTION), ("assistant", REDACTED_ANSWER)]
    # From the patient's first turn to the end; what came before stays.
    assert _messages(db, conv) == before[conv][:2] + placeholders * 3
    # Elsewhere only the turn whose tool named its screening.
    assert _messages(db, elsewhere) == before[elsewhere][:2] + placeholders + before[elsewhere][4:]
    assert {c: client.get(f"/api/conversations/{c}").json()["title"] for c in (conv, elsewhere)} == titles
    with db.session() as s:
        contexts = [c for c in s.scalars(sa.select(Message.context)) if c]
    named = [(c.get("screening") or {}).get("patient_id") for c in contexts]
    assert other.patient["id"] in named and done.patient["id"] not in named
    # Both conversations go on, their redacted history accepted by the API (`fake_llm` checks it).
    _ask(client, fake_llm, "Anything else?", context(None), conv, Script.text("No."))
    _ask(client, fake_llm, "Anything else?", context(other), elsewhere, Script.text("No."))


def _until(condition: Any, what: str, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_an_answer_being_written_when_its_patient_is_deleted_saves_no_quote(
        client: TestClient, db: Database, fake_llm: FakeAnthropic) -> None:
    # The watcher that would stop the turn on Stop looks only after the release: the late saves of the
    # whole answer happen, and must store nothing of it.
    client.app.state.chat.poll_seconds = 60  # type: ignore[attr-defined]
    done = screened(client, TRIALS)
    release = threading.Event()
    held = Script.held("She lives in Tromsø, ", "and progressed in March 2026.", release)
    fake_llm.script(held)
    turns: list[Turn] = []
    sender = threading.Thread(target=lambda: turns.append(ask(client, "Where does she live?", context(done))))
    sender.start()
    try:
        assert held.reached.wait(10)
        _until(lambda: "messages" in _quoted(db, ("Tromsø",)), "a checkpoint of the half answer")
        assert client.delete(f"/api/patients/{done.patient['id']}").status_code == 204
        assert _quoted(db) == {}
        with db.session() as s:
            asked = s.execute(sa.text("SELECT stop_requested, active_turn_id FROM conversations")).one()
        assert asked.active_turn_id is not None and asked.stop_requested  # Stop asked of its worker
    finally:
        release.set()
        sender.join(30)
    assert not sender.is_alive()
    assert "March 2026" in turns[0].text  # the writer's own stream got the rest: its saves came after
    assert _quoted(db) == {}
    conv = turns[0].complete["conversation_id"]
    assert _messages(db, conv) == [("user", REDACTED_QUESTION), ("assistant", REDACTED_ANSWER)]
    with db.session() as s:
        status = s.execute(sa.text("SELECT status FROM chat_turns")).scalar_one()
        free = s.execute(sa.text("SELECT active_turn_id FROM conversations")).scalar_one()
    assert status == "interrupted" and free is None
    _ask(client, fake_llm, "Anything else?", context(None), conv, Script.text("No."))


def test_saved_views_naming_the_patient_go_with_it(demo_alice: TestClient, alice_screened: Screened) -> None:
    """A view's state is the page's own JSON: one naming the patient, a screening of it or its label goes."""
    s = alice_screened
    views = {"screening": {"patient": {"screeningId": s.detail["id"]}},
             "labelled": {"title": f"Trials for {s.patient['label']}"},
             "plain": {"form": {"condition": "breast cancer"}, "screening_id": s.detail["id"] + 1000}}
    for name, state in views.items():
        assert demo_alice.post("/api/views/trialscout", json={"name": name, "state": state}).status_code == 201
    assert demo_alice.put("/api/views/trialscout/current",
                          json={"state": {"panel": {"patient_id": s.patient["id"]}}}).status_code == 200
    assert demo_alice.get("/api/views/trialscout/current").json()["state"]

    assert demo_alice.delete(f"/api/patients/{s.patient['id']}").status_code == 204

    assert [(v["name"], v["state"]) for v in demo_alice.get("/api/views/trialscout").json()] == [
        ("plain", views["plain"])]
    assert not demo_alice.get("/api/views/trialscout/current").json()["state"]
