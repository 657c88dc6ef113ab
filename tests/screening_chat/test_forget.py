"""Deleting a patient forgets it in the chat too: the turns from the first one sent while it was loaded to the
end of that conversation are redacted (question, page context, answer, tool results, cards, stored events) in
the delete's transaction; other conversations, other patients' and other users' stay as they were. Rows
counted on SQLite and PostgreSQL (later turns and running ones: test_forget_after.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import sqlalchemy as sa
from starlette.testclient import TestClient

from backend.conversations.forget import REDACTED_ANSWER, REDACTED_QUESTION, REDACTED_TITLE
from backend.db.models.conversations import Message, MessageVersion
from backend.db.models.turns import TurnEvent
from backend.db.session import Database
from backend.screening import store
from tests.screening_api.conftest import NOTE_MARKERS
from tests.screening_chat.conftest import Screened, ask, context, screened

OTHER_NOTE = ("0. A 45-year-old man with metastatic melanoma, lives in Bergen. "
              "1. He progressed on nivolumab in May 2025. 2. ECOG performance status 0.")


def _rows(db: Database) -> list[dict[str, Any]]:
    with db.session() as s:
        return [{"id": m.id, "conversation_id": m.conversation_id, "content": m.content, "context": m.context,
                 "extras": m.extras} for m in s.scalars(sa.select(Message).order_by(Message.id))]


def _quoting(db: Database, words: tuple[str, ...]) -> set[int]:
    """Messages whose text, context or extras hold any of the words (the JSON read back as text)."""
    return {r["id"] for r in _rows(db)
            if any(w in json.dumps([r["content"], r["context"], r["extras"]], ensure_ascii=False) for w in words)}


def _count(db: Database, sql: str) -> int:
    with db.session() as s:
        return int(s.execute(sa.text(sql)).scalar_one())


def _events_quoting(db: Database, word: str) -> int:
    with db.session() as s:
        return sum(word in json.dumps(d, ensure_ascii=False) for d in s.scalars(sa.select(TurnEvent.data)))


def test_deleting_a_patient_redacts_the_chat_about_it(demo_alice: TestClient, demo_bob: TestClient,
                                                      alice_screened: Screened, db: Database) -> None:
    s = alice_screened
    excluded = next(t for t in s.shortlist if t["verdict"] == "EXCLUDED")
    about = ask(demo_alice, f"Why is {excluded['nct_id']} excluded for her?", context(s))
    assert about.tools == ["get_screening_trial"]
    conv = about.complete["conversation_id"]
    general = ask(demo_alice, "What can you help me with on this page?", context(None), conv)
    again = ask(demo_alice, "She's actually 64, please update the profile", context(s), conv)
    assert again.cards and again.cards[0]["type"] == "patient_profile_edit"
    other = screened(demo_alice, note=OTHER_NOTE)
    kept = ask(demo_alice, "How did he do overall?", context(other)).complete["conversation_id"]
    bobs = screened(demo_bob, note=OTHER_NOTE)
    ask(demo_bob, "How did he do overall?", context(bobs))

    marked = _quoting(db, NOTE_MARKERS)
    assert len(marked) == 4  # the two questions (their profile) and the two answers (note, profile)
    assert _events_quoting(db, "March 2026") > 0  # the tool's quote, in the turn's stored events
    before = {r["id"]: r for r in _rows(db)}
    messages, events = _count(db, "SELECT count(*) FROM messages"), _count(db, "SELECT count(*) FROM turn_events")

    assert demo_alice.delete(f"/api/patients/{s.patient['id']}").status_code == 204

    after = {r["id"]: r for r in _rows(db)}
    assert _quoting(db, NOTE_MARKERS) == set() and _events_quoting(db, "March 2026") == 0
    assert _quoting(db, (s.patient["profile"]["summary"],)) == set()
    assert len(after) == messages  # redacted in place: the conversation still reads in order
    assert 0 < _count(db, "SELECT count(*) FROM turn_events") < events
    redacted = {i for i in after if after[i] != before[i]}
    # Everything from the patient's first turn on, the turn sent without it too (its answer can quote her).
    assert general.text and redacted == marked | {i for i in after if after[i]["conversation_id"] == conv}
    assert len(redacted) == 6
    assert {after[i]["content"] for i in redacted} == {REDACTED_QUESTION, REDACTED_ANSWER}
    assert all(after[i]["context"] is None and not after[i]["extras"] for i in redacted)
    # the other patient's conversation, Bob's: untouched
    assert all(after[i] == before[i] for i in after if after[i]["conversation_id"] != conv)
    assert _quoting(db, ("Bergen",)) and _count(db, "SELECT count(*) FROM patients") == 2

    shown = demo_alice.get(f"/api/conversations/{conv}").json()
    assert shown["title"] == REDACTED_TITLE
    assert [m["content"] for m in shown["messages"]][:2] == [REDACTED_QUESTION, REDACTED_ANSWER]
    assert demo_alice.get(f"/api/conversations/{kept}").json()["title"] != REDACTED_TITLE
    follow_up = ask(demo_alice, "What can you help me with on this page?", context(None), conv)
    assert follow_up.complete["status"] == "complete"  # the redacted history still replays


def test_the_patient_and_its_chat_go_together_or_not_at_all(demo_alice: TestClient, alice_screened: Screened,
                                                            db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """One transaction: a delete that fails after the chat was redacted leaves the chat as it was."""
    s = alice_screened
    ask(demo_alice, "How did she do overall?", context(s))
    before = _rows(db)

    def fail(*args: object) -> None:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(store, "delete_patient", fail)
    with pytest.raises(RuntimeError, match="went away"):
        demo_alice.delete(f"/api/patients/{s.patient['id']}")
    assert _rows(db) == before and _quoting(db, NOTE_MARKERS)
    assert demo_alice.get(f"/api/patients/{s.patient['id']}").status_code == 200


def _versions_quoting(db: Database, words: tuple[str, ...]) -> int:
    with db.session() as s:
        return sum(any(w in json.dumps(v, ensure_ascii=False) for w in words)
                   for v in s.scalars(sa.select(MessageVersion.messages)))


def test_earlier_versions_of_a_turn_about_the_patient_are_redacted(demo_alice: TestClient,
                                                                    alice_screened: Screened, db: Database) -> None:
    """An edit kept the question about the patient as an earlier version: deleting the patient redacts it
    there too, and switching back to it shows the redaction, not the note."""
    s = alice_screened
    about = ask(demo_alice, "How did she do overall?", context(s))
    conv = about.complete["conversation_id"]
    general = ask(demo_alice, "What can you help me with on this page?", context(None), conv)
    question = demo_alice.get(f"/api/conversations/{conv}").json()["messages"][0]
    assert demo_alice.post(f"/api/conversations/{conv}/rewind", json={"message_id": question["id"]}).status_code == 200
    ask(demo_alice, "What can you help me with on this page?", context(None), conv)
    assert _quoting(db, NOTE_MARKERS) == set()  # the active path no longer names the patient
    assert _versions_quoting(db, NOTE_MARKERS) == 1
    active = _rows(db)

    assert demo_alice.delete(f"/api/patients/{s.patient['id']}").status_code == 204

    assert _versions_quoting(db, NOTE_MARKERS + (s.patient["profile"]["summary"],)) == 0
    assert _rows(db) == active
    shown = demo_alice.get(f"/api/conversations/{conv}").json()
    assert shown["title"] == REDACTED_TITLE  # clipped from the first question, now redacted
    first = shown["versions"][0]
    assert (first["current"], first["count"]) == (2, 2)
    r = demo_alice.post(f"/api/conversations/{conv}/versions/switch", json={"message_id": first["message_id"],
                                                                           "version": 1})
    assert r.status_code == 200, r.text
    messages = r.json()["messages"]
    assert [m["content"] for m in messages][:2] == [REDACTED_QUESTION, REDACTED_ANSWER]
    assert messages[0]["context"] is None and messages[1]["extras"]["payloads"] == []
    # That version's later turn, asked without the patient, goes too: from her first turn to the end.
    assert messages[2]["content"] == REDACTED_QUESTION and messages[3]["content"] == REDACTED_ANSWER
    assert general.text.strip() not in json.dumps(messages)
    assert _quoting(db, NOTE_MARKERS) == set()
    follow_up = ask(demo_alice, "What can you help me with on this page?", context(None), conv)
    assert follow_up.complete["status"] == "complete"  # the redacted version still replays


def test_a_version_forked_after_the_patients_turn_is_redacted_whole(demo_alice: TestClient,
                                                                     alice_screened: Screened, db: Database) -> None:
    """A regenerate after the patient's turn archives a tail that names nothing of her, but it followed her
    turn (its answer could quote her): it is redacted like the shown path's later turns; the version of a
    conversation she never appeared in stays."""
    s = alice_screened
    about = ask(demo_alice, "How did she do overall?", context(s))
    conv = about.complete["conversation_id"]
    later = ask(demo_alice, "What can you help me with on this page?", context(None), conv)
    elsewhere = ask(demo_alice, "What can you help me with on this page?", context(None))
    for c in (conv, elsewhere.complete["conversation_id"]):
        question = [m for m in demo_alice.get(f"/api/conversations/{c}").json()["messages"] if m["role"] == "user"][-1]
        assert demo_alice.post(f"/api/conversations/{c}/rewind", json={"message_id": question["id"]}).status_code == 200
        ask(demo_alice, "What can you help me with on this page?", context(None), c)
    with db.session() as session:
        assert len(session.scalars(sa.select(MessageVersion)).all()) == 2

    assert demo_alice.delete(f"/api/patients/{s.patient['id']}").status_code == 204

    with db.session() as session:
        archived = {v.conversation_id: v.messages for v in session.scalars(sa.select(MessageVersion))}
    assert [m["content"] for m in archived[conv]] == [REDACTED_QUESTION, REDACTED_ANSWER]
    assert later.text.strip() not in json.dumps(archived[conv])
    kept = archived[elsewhere.complete["conversation_id"]]
    assert [m["content"] for m in kept][0] == "What can you help me with on this page?"
    assert kept[1]["content"] == elsewhere.text.strip()


def test_a_redacted_turn_reads_as_removed_in_the_tray_and_the_export(demo_alice: TestClient,
                                                                       alice_screened: Screened) -> None:
    """What the user gets back for a conversation after deleting its patient: each redacted question has
    no page context (null, as an answer has: the tray then shows no "What the assistant saw"), nothing of
    its extras, and the exports read the placeholders; nowhere a literal "null" or "None" for what went."""
    s = alice_screened
    conv = ask(demo_alice, "How did she do overall?", context(s)).complete["conversation_id"]
    ask(demo_alice, "What can you help me with on this page?", context(None), conv)
    shown = demo_alice.get(f"/api/conversations/{conv}").json()
    assert shown["messages"][0]["context"]["screening"]["patient_id"] == s.patient["id"]

    assert demo_alice.delete(f"/api/patients/{s.patient['id']}").status_code == 204

    shown = demo_alice.get(f"/api/conversations/{conv}").json()
    questions = [m for m in shown["messages"] if m["role"] == "user"]
    answers = [m for m in shown["messages"] if m["role"] == "assistant"]
    assert [m["content"] for m in questions] == [REDACTED_QUESTION] * 2
    assert [m["content"] for m in answers] == [REDACTED_ANSWER] * 2
    assert all(m["context"] is None for m in shown["messages"])
    assert all(m["status"] == "complete" for m in shown["messages"])
    assert not any(value for m in shown["messages"] for value in m["extras"].values() if value not in ([], {}, None))
    for fmt in ("markdown", "html"):
        exported = demo_alice.get(f"/api/conversations/{conv}/export?format={fmt}")
        assert exported.status_code == 200
        text = exported.text
        assert text.count(REDACTED_QUESTION) == 2 and text.count(REDACTED_ANSWER) == 2
        assert "null" not in text and "None" not in text
