"""A begin and a sweep ending the same stale turn at once, on PostgreSQL: both take the conversation's row before
the turn's (the order a final save and forgetting a patient take them), so one waits for the other instead of
the two deadlocking; the begin's claim stands and the stale turn is ended once."""

from __future__ import annotations

import threading
import time
import uuid
from datetime import timedelta

import pytest
import sqlalchemy as sa

from backend.chat import turns
from backend.db.base import utcnow
from backend.db.models import ChatTurn, Conversation, Message
from backend.db.session import Database
from tests.conftest import add_user


def stale_turn(db: Database) -> tuple[int, str]:
    """A turn whose worker stopped renewing: its conversation's lease lapsed a second ago."""
    user_id, turn_id = add_user(db, "alice"), uuid.uuid4().hex
    with db.session() as s:
        conv = Conversation(
            user_id=user_id,
            app="kh",
            title="t",
            active_turn_id=turn_id,
            active_turn_expires_at=utcnow() - timedelta(seconds=1),
        )
        s.add(conv)
        s.flush()
        question = Message(conversation_id=conv.id, role="user", content="q", status="complete")
        answer = Message(conversation_id=conv.id, role="assistant", content="Half", status="running")
        s.add_all([question, answer])
        s.flush()
        s.add(
            ChatTurn(
                id=turn_id,
                conversation_id=conv.id,
                user_id=user_id,
                request_hash="x",
                status="running",
                user_message_id=question.id,
                assistant_message_id=answer.id,
                last_event_id=3,
            )
        )
        return conv.id, turn_id


def waiting_on_a_lock(db: Database, pid: int) -> bool:
    with db.engine.connect() as conn:
        return (
            conn.execute(
                sa.text("SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = :p"), {"p": pid}
            ).scalar()
            is True
        )


def test_a_begin_and_a_sweep_on_the_same_stale_turn_do_not_deadlock(db: Database) -> None:
    if db.engine.dialect.name != "postgresql":
        pytest.skip("row locks: SQLite has one writer at a time")
    conv_id, stale = stale_turn(db)
    new_turn = uuid.uuid4().hex
    swept: list[int | BaseException] = []
    with db.session() as begin:
        assert turns.claim(begin, conv_id, new_turn)  # the begin holds the conversation's row from here
        sweep_pid: list[int] = []

        def sweep() -> None:
            try:
                with db.session() as s:
                    sweep_pid.append(s.connection().exec_driver_sql("SELECT pg_backend_pid()").scalar_one())
                    swept.append(turns.interrupt_stale(s, conv_id))
            except BaseException as error:  # noqa: BLE001 - the test reports what the sweep raised
                swept.append(error)

        sweeper = threading.Thread(target=sweep)
        sweeper.start()
        deadline = time.monotonic() + 10
        while not (sweep_pid and waiting_on_a_lock(db, sweep_pid[0])):
            assert time.monotonic() < deadline and sweeper.is_alive(), f"the sweep never waited: {swept}"
            time.sleep(0.02)
        assert turns.interrupt_stale(begin, conv_id) == 1  # as begin does right after its claim
    sweeper.join(30)
    assert swept == [0]  # it waited for the begin, then found the turn already ended
    with db.session() as s:
        conv = s.get(Conversation, conv_id)
        assert conv is not None and conv.active_turn_id == new_turn
        record = s.get(ChatTurn, stale)
        assert record is not None and record.status == "interrupted"
