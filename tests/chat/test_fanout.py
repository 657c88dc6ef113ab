"""Live answers across instances on PostgreSQL: two app instances on one database (as two machines), a
reader on B of a turn generated on A. B's safety poll is set to 30 s, so whatever arrives within the
test's few seconds was woken by a notification (LISTEN/NOTIFY), not by polling."""

from __future__ import annotations

import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from starlette.testclient import TestClient

from backend.chat.notify import MAX_PAYLOAD, payloads, turn_ids
from backend.config import Settings
from backend.db.session import Database
from backend.demo.wire import Reply
from backend.main import create_app
from tests.conftest import signed_in
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.fakes.fake_page import CONTEXT
from tests.sse import Event, parse_lines

pytestmark = pytest.mark.usefixtures("test_registry")

ANSWER = " ".join(f"word{i}" for i in range(150))  # 50 deltas of three words
DELTA_SECONDS = 0.03
Timed = list[tuple[float, Event]]


@pytest.fixture
def instances(settings: Settings, db: Database) -> Iterator[tuple[TestClient, TestClient]]:
    """Alice signed in on instance A, and her session on instance B (another machine's process)."""
    if not settings.database_url.startswith("postgresql"):
        pytest.skip("LISTEN/NOTIFY fan-out: PostgreSQL only (SQLite is one host, and polls)")
    slow_poll = settings.model_copy(update={"fanout_safety_poll_seconds": 30.0})
    a = signed_in(create_app(slow_poll), db, "alice")
    b = TestClient(create_app(slow_poll), cookies=a.cookies)
    b.__enter__()
    _wait_for(lambda: b.app.state.chat.fanout.listening and a.app.state.chat.fanout.listening)  # type: ignore[attr-defined]
    yield a, b
    b.__exit__(None, None, None)
    a.__exit__(None, None, None)


def _wait_for(condition: Any, seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def _read(response: Any, into: Timed, started: threading.Event | None = None) -> None:
    for event in parse_lines(response.iter_lines()):
        into.append((time.monotonic(), event))
        if started is not None and event.event == "text_delta":
            started.set()


def _generate_and_read_remotely(a: TestClient, b: TestClient, readers: int = 1,
                                midway: Any = None) -> tuple[Timed, list[Timed], float]:
    """A turn on A, read by its sender on A and by `readers` readers on B that attach mid-answer;
    `midway()` runs once they are attached. Returns A's events, each B reader's, and when B attached."""
    local: Timed = []
    started = threading.Event()
    conversation: dict[str, Any] = {}

    def send() -> None:
        with a.stream("POST", "/api/chat/stream", json={"message": "go", "context": CONTEXT}) as r:
            assert r.status_code == 200
            for event in parse_lines(r.iter_lines()):
                local.append((time.monotonic(), event))
                if event.event == "conversation":
                    conversation.update(event.data)
                if event.event == "text_delta":
                    started.set()

    sender = threading.Thread(target=send)
    sender.start()
    assert started.wait(10)
    remote: list[Timed] = [[] for _ in range(readers)]
    attached = time.monotonic()

    def resume(into: Timed) -> None:
        with b.stream("GET", f"/api/conversations/{conversation['conversation_id']}/stream",
                      params={"turn_id": conversation["turn_id"]}, headers={"Last-Event-ID": "0"}) as r:
            assert r.status_code == 200
            _read(r, into)

    threads = [threading.Thread(target=resume, args=(into,)) for into in remote]
    for thread in threads:
        thread.start()
    if midway is not None:
        midway()
    for thread in [*threads, sender]:
        thread.join(20)
        assert not thread.is_alive()
    return local, remote, attached


def _lags(local: Timed, remote: Timed, since: float) -> list[float]:
    """For each event A's reader got after `since`: how much later B's reader got it."""
    at_b = {e.id: t for t, e in remote}
    return [at_b[e.id] - t for t, e in local if t > since + 0.3 and e.id in at_b]


def _same(local: Timed, remote: Timed) -> None:
    ids = [e.id for _, e in remote]
    assert len(ids) == len(set(ids)), "an event came twice"
    assert [(e.id, e.event, e.data) for _, e in remote] == [(e.id, e.event, e.data) for _, e in local]
    assert remote[-1][1].event == "complete"


def test_a_reader_on_another_instance_gets_every_event_once_in_order_promptly(
        instances: tuple[TestClient, TestClient], fake_llm: FakeAnthropic) -> None:
    a, b = instances
    fake_llm.script(Script.answer(Reply.text(ANSWER), delay=DELTA_SECONDS))
    local, (remote,), attached = _generate_and_read_remotely(a, b)
    _same(local, remote)
    lags = _lags(local, remote, attached)
    assert len(lags) > 20
    # Checkpoints alone (every 0.5 s) would make the median lag ~0.25 s: the turn is flushed eagerly
    # while B announces a reader, and B is woken by the notification, not by its 30 s poll.
    assert statistics.median(lags) < 0.2, sorted(lags)
    assert max(lags) < 2.0, sorted(lags)
    assert b.app.state.chat.fanout.listener.connections == 1  # type: ignore[attr-defined]


def test_many_readers_on_one_instance_share_its_reads(instances: tuple[TestClient, TestClient],
                                                      fake_llm: FakeAnthropic) -> None:
    a, b = instances
    fanout = b.app.state.chat.fanout  # type: ignore[attr-defined]
    fake_llm.script(Script.answer(Reply.text(ANSWER), delay=DELTA_SECONDS))
    local, remote, _ = _generate_and_read_remotely(a, b, readers=1)
    one_reader = fanout.reads
    fake_llm.script(Script.answer(Reply.text(ANSWER), delay=DELTA_SECONDS))
    local, remote, _ = _generate_and_read_remotely(a, b, readers=6)
    for each in remote:
        _same(local, each)
    # One read per batch of stored events for the instance, however many read: not one per reader.
    assert fanout.reads - one_reader < 2 * one_reader, (one_reader, fanout.reads - one_reader)


def test_the_listener_connection_lost_mid_answer_is_listened_on_again(
        instances: tuple[TestClient, TestClient], fake_llm: FakeAnthropic, settings: Settings) -> None:
    a, b = instances
    listener = b.app.state.chat.fanout.listener  # type: ignore[attr-defined]
    killed_at: list[float] = []

    def kill_listener() -> None:
        time.sleep(0.3)
        engine = sa.create_engine(settings.database_url)
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": listener.backend_pid}).scalar()
        engine.dispose()
        killed_at.append(time.monotonic())

    fake_llm.script(Script.answer(Reply.text(ANSWER), delay=DELTA_SECONDS))
    local, (remote,), _ = _generate_and_read_remotely(a, b, midway=kill_listener)
    _same(local, remote)
    assert listener.connections == 2 and listener.connected
    # Within the 30 s safety poll: after the reconnect, what was missed is read and the rest is notified.
    assert max(_lags(local, remote, killed_at[0])) < 1.5


def test_an_idle_remote_reader_costs_the_database_nothing(instances: tuple[TestClient, TestClient],
                                                          fake_llm: FakeAnthropic) -> None:
    a, b = instances
    fanout = b.app.state.chat.fanout  # type: ignore[attr-defined]
    fake_llm.script(Script.stall("Half an answer. ", after_deltas=1, hold=3.0))
    reads: list[int] = []

    def idle() -> None:
        time.sleep(0.5)  # the readers attached and caught up
        reads.append(fanout.reads)
        time.sleep(2.0)
        reads.append(fanout.reads)

    _generate_and_read_remotely(a, b, readers=5, midway=idle)
    assert reads[1] - reads[0] <= 2  # the instance's announcement of its readers (every 2 s), not per reader


def test_notification_payloads_stay_under_postgresql_limit() -> None:
    ids = [f"{i:032x}" for i in range(1000)]
    chunks = list(payloads(ids))
    assert len(chunks) > 1 and all(len(c) <= MAX_PAYLOAD for c in chunks)
    assert [t for c in chunks for t in turn_ids(c)] == ids


def test_a_resume_past_a_finished_turns_end_gets_its_end_after_its_id(alice: TestClient,
                                                                     fake_llm: FakeAnthropic) -> None:
    """Both databases: a finished turn is read from the database; a client holding ids past its stored end
    (a dead worker's readers may) gets the end numbered after them, not a wait."""
    fake_llm.script(Script.text("Done."))
    events = list(parse_lines(alice.post("/api/chat/stream", json={"message": "hi", "context": CONTEXT})
                              .text.replace("\r\n", "\n").split("\n")))
    conversation_id = events[0].data["conversation_id"]
    again = alice.get(f"/api/conversations/{conversation_id}/stream", headers={"Last-Event-ID": "999"})
    replayed = list(parse_lines(again.text.replace("\r\n", "\n").split("\n")))
    assert [(e.id, e.event) for e in replayed] == [("1000", "complete")]
    assert replayed[0].data == events[-1].data
    whole = alice.get(f"/api/conversations/{conversation_id}/stream")
    assert [(e.id, e.event, e.data) for e in parse_lines(whole.text.replace("\r\n", "\n").split("\n"))] == [
        (e.id, e.event, e.data) for e in events]


def test_a_turn_a_draining_instance_suspends_goes_on_at_once_for_its_readers_elsewhere(
        instances: tuple[TestClient, TestClient], fake_llm: FakeAnthropic, db: Database, db_url: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader resumed on B (as after `reconnect`) before the draining instance saved its turn follows
    the turn's events while it still runs there. Saved `suspended`, the turn goes on on B at once, on the
    notification: B's own check of its feeds' turns is an hour away here (2 s in production, which every
    such reader waited)."""
    from backend.chat import fanout, turns
    from backend.chat.turn import ResumeState
    from backend.chat.turns import Suspension
    from backend.db.models import ChatTurn, Message
    from tests.chat.test_liveness import GHOST, checkpointed_at_3, running_turn_of, user_id

    monkeypatch.setattr(fanout, "STALE_SECONDS", 3600.0)
    _, b = instances
    draining = subprocess.Popen([sys.executable, "-c", GHOST, db_url], stdout=subprocess.PIPE, text=True)
    try:
        assert draining.stdout is not None
        worker_id = draining.stdout.readline().strip()
        conv_id, answer_id = running_turn_of(db, user_id(db), worker_id)
        checkpointed_at_3(db, answer_id, conv_id)
        fake_llm.script(Script.text("wer."))
        got: Timed = []

        def resume() -> None:
            with b.stream("GET", f"/api/conversations/{conv_id}/stream", headers={"Last-Event-ID": "3"}) as r:
                assert r.status_code == 200
                _read(r, got)

        reader = threading.Thread(target=resume)
        reader.start()
        feeds = b.app.state.chat.fanout.feeds  # type: ignore[attr-defined]
        _wait_for(lambda: any(f.fetched for f in feeds.values()))  # following the turn that runs elsewhere
        with db.session() as s:
            turn = s.query(ChatTurn).filter_by(assistant_message_id=answer_id).one()
            answer = s.get(Message, answer_id)
            saved = ResumeState.load(turn.resume_state)
            assert answer is not None and saved is not None
            suspension = Suspension(turn.id, conv_id, answer_id, [], answer.content, answer.extras, saved)
            assert turns.save_suspended(s, [suspension]) == {turn.id}
        reader.join(20)
        assert not reader.is_alive(), "the reader was not told: it waits for B's check of its feeds"
    finally:
        draining.kill()
        draining.wait(10)
        if draining.stdout is not None:
            draining.stdout.close()
    events = [e for _, e in got]
    assert events[-1].event == "complete" and events[-1].data["payload"]["message"] == "Half an answer."
    assert "resync" not in [e.event for e in events]  # a suspended turn stored all it sent
    with db.session() as s:
        assert s.query(ChatTurn).filter_by(assistant_message_id=answer_id).one().continued == 1
