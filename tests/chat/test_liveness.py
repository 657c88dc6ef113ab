"""Worker liveness: a turn left `running` by a worker process that died holds its
conversation only while that worker's lock says it lives — not for the whole lease. The dead worker is a
real process (it takes its lock, then gets `kill -9`), on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from starlette.testclient import TestClient

from backend.agent.schemas import MessageExtras
from backend.chat import turns
from backend.chat.log import RESERVE
from backend.db.base import utcnow
from backend.db.models import ChatTurn, Conversation, Message, TurnEvent
from backend.db.session import Database
from backend.main import create_app
from tests.conftest import make_settings, signed_in
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.fakes.fake_page import CONTEXT
from tests.sse import assembled, parse

pytestmark = pytest.mark.usefixtures("test_registry")

GHOST = """
import sys, time
from backend.chat.workers import WorkerPresence
from backend.db.session import Database
presence = WorkerPresence(Database(sys.argv[1]))
presence.hold()
assert presence.held
print(presence.id, flush=True)
time.sleep(120)
"""


@pytest.fixture
def ghost(db_url: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """Another worker process holding its liveness lock; the test kills it."""
    proc = subprocess.Popen([sys.executable, "-c", GHOST, db_url], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    worker_id = proc.stdout.readline().strip()
    assert worker_id.isdigit(), worker_id
    yield proc, worker_id
    proc.kill()
    proc.wait(10)
    proc.stdout.close()


def running_turn_of(db: Database, user_id: int, worker_id: str) -> tuple[int, int]:
    """What a worker leaves in the database mid-answer: the user message, the assistant message with its
    last checkpoint, the running turn naming the worker, and the conversation's live 10 s lease."""
    turn_id = uuid.uuid4().hex
    with db.session() as s:
        conv = Conversation(user_id=user_id, app="kh", title="ghost", active_turn_id=turn_id,
                            active_turn_expires_at=utcnow() + turns.LEASE)
        s.add(conv)
        s.flush()
        user = Message(conversation_id=conv.id, role="user", content="question", status="complete")
        answer = Message(conversation_id=conv.id, role="assistant", content="Half an ans", status="running",
                         extras=MessageExtras(turn_id=turn_id).model_dump(mode="json"))
        s.add_all([user, answer])
        s.flush()
        s.add(ChatTurn(id=turn_id, conversation_id=conv.id, user_id=user_id, request_hash="x", status="running",
                       user_message_id=user.id, assistant_message_id=answer.id, last_event_id=3,
                       worker_id=worker_id))
        return conv.id, answer.id


def user_id(db: Database, name: str = "alice") -> int:
    from backend.db.models import User
    with db.session() as s:
        return s.query(User).filter_by(username=name).one().id


def ask(client: TestClient, conversation_id: int) -> Any:
    return client.post("/api/chat/stream", json={"message": "next", "context": CONTEXT,
                                                 "conversation_id": conversation_id})


def test_a_dead_workers_turn_frees_its_conversation_at_once(
        alice: TestClient, fake_llm: FakeAnthropic, db: Database, ghost: tuple[subprocess.Popen[str], str]) -> None:
    proc, worker_id = ghost
    conv_id, answer_id = running_turn_of(db, user_id(db), worker_id)
    assert ask(alice, conv_id).status_code == 409  # its worker lives: the turn keeps its conversation

    proc.kill()
    proc.wait(10)
    fake_llm.script(Script.text("A fresh answer."))
    r = ask(alice, conv_id)  # well inside the dead worker's 10 s lease
    assert r.status_code == 200, r.text
    events = parse(r.text)
    assert events[-1].event == "complete" and events[-1].data["payload"]["message"] == "A fresh answer."
    with db.session() as s:
        old = s.get(Message, answer_id)
        assert old is not None and old.status == "interrupted" and old.content == "Half an ans"
        assert old.extras["error"]["code"] == "interrupted"
        dead_turn = s.query(ChatTurn).filter_by(assistant_message_id=answer_id).one()
        # its end is numbered after any id its readers may hold (its worker sent them up to RESERVE ahead),
        # after a `resync` to the stored answer (they may hold text it never stored)
        assert dead_turn.status == "interrupted" and dead_turn.last_event_id == 3 + RESERVE + 2
        lost, end = s.get(TurnEvent, (dead_turn.id, 3 + RESERVE + 1)), s.get(TurnEvent, (dead_turn.id, 3 + RESERVE + 2))
        assert lost is not None and lost.type == "resync" and lost.data["text"] == "Half an ans"
        assert end is not None and end.type == "error" and end.data["code"] == "interrupted"
    # the model saw a valid history: the interrupted answer, then the new question
    sent = fake_llm.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]


def test_stop_on_a_dead_workers_turn_tells_the_truth(
        alice: TestClient, fake_llm: FakeAnthropic, db: Database, ghost: tuple[subprocess.Popen[str], str]) -> None:
    proc, worker_id = ghost
    conv_id, answer_id = running_turn_of(db, user_id(db), worker_id)
    proc.kill()
    proc.wait(10)
    assert alice.post(f"/api/conversations/{conv_id}/stop").json() == {"stopped": True}
    with db.session() as s:  # stopped means stopped: marked, and the conversation is free
        old = s.get(Message, answer_id)
        assert old is not None and old.status == "interrupted"
        conv = s.get(Conversation, conv_id)
        assert conv is not None and conv.active_turn_id is None and not conv.stop_requested
    assert alice.post(f"/api/conversations/{conv_id}/stop").json() == {"stopped": False}
    fake_llm.script(Script.text("Next."))
    assert ask(alice, conv_id).status_code == 200


def test_a_live_worker_is_never_taken_for_dead(alice: TestClient, app: Any, db: Database,
                                               ghost: tuple[subprocess.Popen[str], str]) -> None:
    """The check is by lock, not by guess: this worker, a live one elsewhere and an unknown id stay alive
    for liveness purposes unless their lock is free."""
    _proc, worker_id = ghost
    presence = app.state.chat.presence
    assert presence.held
    with db.session() as s:
        assert presence.dead(s, [presence.id, worker_id, None, ""]) == set()
        conv_id, _ = running_turn_of(db, user_id(db), worker_id)
        assert turns.interrupt_stale(s, conv_id, workers=presence) == 0
        # the lease stays the fallback: once it lapses the turn is stale whoever holds a lock
        assert turns.interrupt_stale(s, conv_id, now=utcnow() + turns.LEASE + timedelta(seconds=1),
                                     workers=presence) == 1


def killed_after(checkpoint: Callable[[Database, int, int], None], db: Database,
                 ghost: tuple[subprocess.Popen[str], str]) -> tuple[int, int]:
    """The ghost worker mid-answer, `checkpoint` the last it wrote, then killed: (conversation, answer) ids."""
    proc, worker_id = ghost
    conv_id, answer_id = running_turn_of(db, user_id(db), worker_id)
    checkpoint(db, answer_id, conv_id)
    proc.kill()
    proc.wait(10)
    return conv_id, answer_id


def checkpointed_at_3(db: Database, answer_id: int, conv_id: int) -> None:
    """The dead worker's last checkpoint: events 1-3 stored, "Half an ans" in its resume state."""
    from backend.agent.schemas import ConversationOpened, TextDelta
    from backend.chat.log import Frame
    from backend.chat.turns import save_frames

    with db.session() as s:
        turn = s.query(ChatTurn).filter_by(assistant_message_id=answer_id).one()
        turn.resume_state = {"messages": [], "text": "", "partial_text": "Half an ans", "tool_calls": 0,
                             "usage": {}, "tool_history": [], "tool_payloads": []}
        opened = ConversationOpened(conversation_id=conv_id, turn_id=turn.id, user_message_id=answer_id - 1)
        save_frames(s, [(turn.id, [Frame(1, opened.type, opened.to_data()),
                                   Frame(2, "text_delta", TextDelta(text="Half ").to_data()),
                                   Frame(3, "text_delta", TextDelta(text="an ans").to_data())])])


def test_a_dead_workers_answer_goes_on_when_its_reader_comes_back(
        alice: TestClient, fake_llm: FakeAnthropic, db: Database, ghost: tuple[subprocess.Popen[str], str]) -> None:
    """kill -9 mid-answer, then the client resumes: this worker takes the turn over from its checkpoint
    (events 1-3 stored, "Half an ans" shown) and the model continues the partial as a prefill."""
    conv_id, answer_id = killed_after(checkpointed_at_3, db, ghost)
    fake_llm.script(Script.text("wer."))
    r = alice.get(f"/api/conversations/{conv_id}/stream", headers={"Last-Event-ID": "3"})
    events = parse(r.text)
    first = 3 + RESERVE + 1  # after any id the dead worker's readers may hold
    assert [int(e.id or 0) for e in events] == list(range(first, first + len(events)))
    assert events[-1].event == "complete" and events[-1].data["payload"]["message"] == "Half an answer."
    prefill = fake_llm.requests[-1]["messages"][-1]
    assert prefill == {"role": "assistant", "content": [{"type": "text", "text": "Half an ans",
                                                         "cache_control": {"type": "ephemeral"}}]}
    assert not fake_llm.violations
    with db.session() as s:
        turn = s.query(ChatTurn).filter_by(assistant_message_id=answer_id).one()
        assert turn.status == "complete" and turn.continued == 1
        answer = s.get(Message, answer_id)
        assert answer is not None and answer.status == "complete" and answer.content == "Half an answer."
    # a second reader after the end replays; it never generates again
    again = parse(alice.get(f"/api/conversations/{conv_id}/stream", headers={"Last-Event-ID": "3"}).text)
    assert [(e.id, e.data) for e in again] == [(e.id, e.data) for e in events]
    assert len(fake_llm.requests) == 1


def test_a_reader_ahead_of_the_dead_workers_last_save_misses_nothing_of_the_continuation(
        alice: TestClient, fake_llm: FakeAnthropic, db: Database, ghost: tuple[subprocess.Popen[str], str]) -> None:
    """kill -9 after the worker sent its reader events 4 and 5 but stored only 1-3: the worker that goes
    on with the turn never numbers an event 4 or 5 (the reader holds those), so the reader that resumes
    from 5 gets every event of the continuation, none of them under an id it already has."""
    conv_id, answer_id = killed_after(checkpointed_at_3, db, ghost)
    fake_llm.script(Script.text("wer, given in full by the worker that goes on with it."))
    ahead = parse(alice.get(f"/api/conversations/{conv_id}/stream", headers={"Last-Event-ID": "5"}).text)
    behind = parse(alice.get(f"/api/conversations/{conv_id}/stream", headers={"Last-Event-ID": "3"}).text)
    assert ahead and [e.id for e in ahead] == [e.id for e in behind]  # the same events: none under 4 or 5
    assert all(int(e.id or 0) > 3 + RESERVE for e in ahead)
    continued = "".join(e.data["text"] for e in ahead if e.event == "text_delta")
    assert "Half an ans" + continued == ahead[-1].data["payload"]["message"] == (
        "Half an answer, given in full by the worker that goes on with it.")


def test_text_the_dead_worker_sent_but_never_stored_is_shown_once(
        alice: TestClient, fake_llm: FakeAnthropic, db: Database, ghost: tuple[subprocess.Popen[str], str]) -> None:
    """kill -9 after the worker sent its reader "wer, gi" (events 4 and 5) but stored only through "Half an
    ans" (event 3). The model goes on from what was stored, so that text comes again: the continuation
    opens with `resync` (after 3, the stored text), and a client that takes its text from it shows every
    word once, the stored answer, whether it held the lost events or not. Without it: "…answer, giwer, …"."""
    conv_id, answer_id = killed_after(checkpointed_at_3, db, ghost)
    fake_llm.script(Script.text("wer, given in full."))
    ahead = parse(alice.get(f"/api/conversations/{conv_id}/stream", headers={"Last-Event-ID": "5"}).text)
    assert ahead[0].event == "resync" and ahead[0].data == {"type": "resync", "after": 3, "text": "Half an ans"}
    assert int(ahead[0].id or 0) == 3 + RESERVE + 1
    stored = ahead[-1].data["payload"]["message"]
    assert assembled("Half an answer, gi", ahead) == stored == "Half an answer, given in full."
    behind = parse(alice.get(f"/api/conversations/{conv_id}/stream", headers={"Last-Event-ID": "3"}).text)
    assert [e.id for e in behind] == [e.id for e in ahead]
    assert assembled("Half an ans", behind) == stored
    with db.session() as s:
        answer = s.get(Message, answer_id)
        assert answer is not None and answer.content == stored


def test_the_demo_models_turn_is_interrupted_after_kill_9_not_continued(
        db_url: str, db: Database, ghost: tuple[subprocess.Popen[str], str]) -> None:
    """The demo model can't continue a partial answer (it would start its answer again inside the same
    message), so a dead worker's demo turn ends `interrupted` with what its readers saw, as the README says."""
    client = signed_in(create_app(make_settings(db_url)), db, "alice")
    try:
        conv_id, answer_id = killed_after(checkpointed_between, db, ghost)
        events = parse(client.get(f"/api/conversations/{conv_id}/stream", headers={"Last-Event-ID": "4"}).text)
        assert [e.event for e in events] == ["resync", "error"] and events[1].data["code"] == "interrupted"
        assert events[0].data == {"type": "resync", "after": 4, "text": "Half an ans"}
        assert int(events[0].id or 0) > 4 + RESERVE
        with db.session() as s:
            answer = s.get(Message, answer_id)
            assert answer is not None and answer.status == "interrupted" and answer.content == "Half an ans"
            assert s.query(ChatTurn).filter_by(assistant_message_id=answer_id).one().continued == 0
    finally:
        client.__exit__(None, None, None)


def test_text_the_dead_worker_sent_but_never_stored_leaves_with_its_interrupted_turn(
        alice: TestClient, db: Database, ghost: tuple[subprocess.Popen[str], str]) -> None:
    """kill -9 after the worker sent its reader "wer, gi" (events 4 and 5) but stored only through "Half an
    ans" (event 3); the turn is then ended, not continued (Stop here; the sweep, a new turn and the demo
    model's turns alike). The stored answer is "Half an ans": the end opens with `resync` (after 3, the
    stored text), so the reader's answer is the stored one, not text the conversation doesn't have."""
    conv_id, answer_id = killed_after(checkpointed_at_3, db, ghost)
    assert alice.post(f"/api/conversations/{conv_id}/stop").json() == {"stopped": True}
    ahead = parse(alice.get(f"/api/conversations/{conv_id}/stream", headers={"Last-Event-ID": "5"}).text)
    assert [e.event for e in ahead] == ["resync", "error"] and ahead[1].data["code"] == "interrupted"
    assert ahead[0].data == {"type": "resync", "after": 3, "text": "Half an ans"}
    assert [int(e.id or 0) for e in ahead] == [3 + RESERVE + 1, 3 + RESERVE + 2]  # after the ids it held
    behind = parse(alice.get(f"/api/conversations/{conv_id}/stream", headers={"Last-Event-ID": "3"}).text)
    assert [(e.id, e.data) for e in behind] == [(e.id, e.data) for e in ahead]
    with db.session() as s:
        answer = s.get(Message, answer_id)
        assert answer is not None and answer.status == "interrupted"
        assert assembled("Half an answer, gi", ahead) == assembled("Half an ans", behind) == answer.content


def test_a_suspended_turn_ended_as_interrupted_has_no_resync(alice: TestClient, db: Database) -> None:
    """A turn its worker suspended at shutdown stored every event it sent: its readers hold nothing the
    stored answer lacks, so its interrupted end is the terminal event alone, right after the last id."""
    conv_id, answer_id = running_turn_of(db, user_id(db), worker_id="")
    checkpointed_at_3(db, answer_id, conv_id)
    with db.session() as s:
        s.query(ChatTurn).filter_by(assistant_message_id=answer_id).one().status = "suspended"
    with db.session() as s:
        assert turns.interrupt_stale(s, conv_id) == 1
    events = parse(alice.get(f"/api/conversations/{conv_id}/stream", headers={"Last-Event-ID": "3"}).text)
    assert [(e.event, int(e.id or 0)) for e in events] == [("error", 4)]


def checkpointed_between(db: Database, answer_id: int, conv_id: int) -> None:
    """The dead worker's last whole checkpoint held "Half " (through event 2); its later checkpoints wrote
    only events (3 and 4: "an " and "ans"), as a checkpoint does while the text streams and hasn't doubled."""
    from backend.agent.schemas import ConversationOpened, TextDelta
    from backend.chat.log import Frame
    from backend.chat.turns import save_frames

    with db.session() as s:
        turn = s.query(ChatTurn).filter_by(assistant_message_id=answer_id).one()
        answer = s.get(Message, answer_id)
        assert answer is not None
        answer.content = "Half "
        answer.extras = MessageExtras(turn_id=turn.id, blocks=[
            {"role": "assistant", "content": [{"type": "text", "text": "Half "}]}]).model_dump(mode="json")
        turn.resume_state = {"messages": [], "text": "", "partial_text": "Half ", "tool_calls": 0, "usage": {},
                             "tool_history": [], "tool_payloads": [], "through": 2}
        turn.last_event_id = 4
        opened = ConversationOpened(conversation_id=conv_id, turn_id=turn.id, user_message_id=answer_id - 1)
        save_frames(s, [(turn.id, [Frame(1, opened.type, opened.to_data()),
                                   Frame(2, "text_delta", TextDelta(text="Half ").to_data()),
                                   Frame(3, "text_delta", TextDelta(text="an ").to_data()),
                                   Frame(4, "text_delta", TextDelta(text="ans").to_data())])])


def test_a_dead_workers_answer_goes_on_from_the_text_its_readers_saw(
        alice: TestClient, fake_llm: FakeAnthropic, db: Database, ghost: tuple[subprocess.Popen[str], str]) -> None:
    """Taken over after checkpoints that wrote only events: the model continues "Half an ans" (what the
    readers were sent), not "Half " (the last whole checkpoint), and the answer reads on without a repeat."""
    conv_id, answer_id = killed_after(checkpointed_between, db, ghost)
    fake_llm.script(Script.text("wer."))
    events = parse(alice.get(f"/api/conversations/{conv_id}/stream", headers={"Last-Event-ID": "4"}).text)
    assert [int(e.id or 0) for e in events] == list(range(5 + RESERVE, 5 + RESERVE + len(events)))
    assert events[-1].event == "complete" and events[-1].data["payload"]["message"] == "Half an answer."
    assert fake_llm.requests[-1]["messages"][-1]["content"][0]["text"] == "Half an ans"
    with db.session() as s:
        answer = s.get(Message, answer_id)
        assert answer is not None and answer.status == "complete" and answer.content == "Half an answer."


def test_a_dead_workers_interrupted_answer_keeps_the_text_its_readers_saw(
        alice: TestClient, fake_llm: FakeAnthropic, db: Database, ghost: tuple[subprocess.Popen[str], str]) -> None:
    """Stopped after its worker died (or swept): the stored answer and its blocks for the next turn's
    history end where the readers' text did, though the last whole checkpoint was two events earlier."""
    conv_id, answer_id = killed_after(checkpointed_between, db, ghost)
    assert alice.post(f"/api/conversations/{conv_id}/stop").json() == {"stopped": True}
    with db.session() as s:
        answer = s.get(Message, answer_id)
        assert answer is not None and answer.status == "interrupted" and answer.content == "Half an ans"
        assert answer.extras["blocks"] == [{"role": "assistant", "content": [{"type": "text", "text": "Half an ans"}]}]
        assert answer.extras["error"]["code"] == "interrupted"
    fake_llm.script(Script.text("Next."))
    assert ask(alice, conv_id).status_code == 200
    sent = fake_llm.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert "Half an ans" in json.dumps(sent[1]["content"])


def test_a_turn_begun_after_a_lapsed_lease_holds_its_conversation(
        alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    """A send that ends a turn whose lease lapsed (its worker stopped renewing) takes the conversation for
    its own turn, and keeps it while it runs: a second send meanwhile is refused, not a second turn."""
    alice.app.state.chat.poll_seconds = 60  # type: ignore[attr-defined]  # (a watcher that saw no lease would stop it)
    conv_id, answer_id = running_turn_of(db, user_id(db), worker_id="")
    with db.session() as s:
        conv = s.get(Conversation, conv_id)
        assert conv is not None
        conv.active_turn_expires_at = utcnow() - timedelta(seconds=1)
    release = threading.Event()
    held = Script.held("A fresh ", "answer.", release)
    fake_llm.script(held)
    sent: list[Any] = []
    sender = threading.Thread(target=lambda: sent.append(ask(alice, conv_id)))
    sender.start()
    try:
        assert held.reached.wait(10)
        with db.session() as s:
            new_turn = s.query(ChatTurn).filter(ChatTurn.status == "running").one()
            conv = s.get(Conversation, conv_id)
            assert conv is not None and conv.active_turn_id == new_turn.id and not conv.stop_requested
            assert conv.active_turn_expires_at is not None and conv.active_turn_expires_at > utcnow()
        assert ask(alice, conv_id).status_code == 409
    finally:
        release.set()
        sender.join(30)
    assert not sender.is_alive()
    events = parse(sent[0].text)
    assert events[-1].event == "complete" and events[-1].data["payload"]["message"] == "A fresh answer."
    with db.session() as s:
        old = s.get(Message, answer_id)
        assert old is not None and old.status == "interrupted"
        assert [t.status for t in s.query(ChatTurn).order_by(ChatTurn.created_at)] == ["interrupted", "complete"]
