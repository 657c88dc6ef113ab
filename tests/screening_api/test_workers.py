"""Screenings across workers (two app instances on one database): Stop and a reader on another worker
than the one screening, a screening whose worker died, and a server that shuts down mid-screening."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from starlette.testclient import TestClient

from backend.db.base import utcnow
from backend.db.session import Database
from backend.main import create_app
from tests.conftest import make_settings, signed_in
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.screening_api.conftest import TRIALS, ScriptedModel, create_patient, kinds, screen
from tests.screening_api.test_screenings import open_screening
from tests.sse import parse_lines


@pytest.fixture
def two_workers(db_url: str, fake_llm: FakeAnthropic, db: Database) -> Iterator[tuple[TestClient, TestClient]]:
    """Alice signed in on two workers; each looks for Stop and new rows every 50 ms."""
    settings = make_settings(db_url, ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=fake_llm.url)
    apps = [create_app(settings), create_app(settings)]
    for app in apps:
        app.state.screening.poll_seconds = app.state.screening.read_poll_seconds = 0.05
    first = signed_in(apps[0], db, "alice")
    second = TestClient(apps[1], cookies=first.cookies)
    second.__enter__()
    yield first, second
    second.__exit__(None, None, None)
    first.__exit__(None, None, None)


def test_stop_and_follow_from_another_worker(two_workers: tuple[TestClient, TestClient],
                                             model: ScriptedModel) -> None:
    here, there = two_workers
    pid = create_patient(here)["id"]
    model.judge = Script.stall(hold=10)
    with ExitStack() as stack:
        sid, events = open_screening(here, stack, pid, nct_ids=TRIALS)
        assert there.get(f"/api/screenings/{sid}").json()["status"] == "running"
        follower = stack.enter_context(there.stream("GET", f"/api/screenings/{sid}/stream",
                                                    headers={"Last-Event-ID": "1"}))
        followed = parse_lines(follower.iter_lines())
        assert next(followed).event == "candidates"  # replayed from the rows

        assert there.post(f"/api/screenings/{sid}/stop").json() == {"stopped": True}  # asked through the database
        rest = list(events)
        assert kinds(rest) == ["complete"] and rest[0].data["status"] == "stopped"
        assert [(e.id, e.data) for e in followed] == [(e.id, e.data) for e in rest]
    assert there.get(f"/api/screenings/{sid}").json()["status"] == "stopped"


def _as_if_running(db: Database, sid: int, pid: int, *, worker: str | None, lease: timedelta) -> None:
    """A finished screening put back as a worker would have left it when it died mid-screening."""
    with db.session() as s:
        last = s.execute(sa.text("SELECT max(seq) FROM screening_events WHERE screening_id = :s"), {"s": sid}).scalar()
        s.execute(sa.text("DELETE FROM screening_events WHERE screening_id = :s AND seq = :q"), {"s": sid, "q": last})
        s.execute(sa.text("UPDATE screenings SET status = 'running', finished_at = NULL, worker_id = :w, "
                          "last_event_id = :q WHERE id = :s"), {"w": worker, "q": last - 1, "s": sid})
        s.execute(sa.text("UPDATE patients SET active_screening_id = :s, active_expires_at = :t WHERE id = :p"),
                  {"s": sid, "t": utcnow() + lease, "p": pid})


@pytest.mark.parametrize("how", ["lease lapsed", "worker dead"])
def test_a_screening_whose_worker_died_is_interrupted(alice: TestClient, model: ScriptedModel, db: Database,
                                                      how: str) -> None:
    pid = create_patient(alice)["id"]
    _, events = screen(alice, pid, nct_ids=TRIALS[:2])
    sid = events[0].data["screening_id"]
    if how == "lease lapsed":
        _as_if_running(db, sid, pid, worker=None, lease=timedelta(seconds=-1))
        stored = alice.get(f"/api/screenings/{sid}").json()
    else:  # the lease runs on, but the worker's liveness lock is free: no process holds it
        _as_if_running(db, sid, pid, worker="123456789", lease=timedelta(minutes=5))
        assert kinds(screen(alice, pid, nct_ids=TRIALS[:1])[1])[-1] == "complete"  # not a 409
        stored = alice.get(f"/api/screenings/{sid}").json()
    assert stored["status"] == "interrupted" and stored["error"]["code"] == "interrupted"
    assert stored["trials_screened"] == 2  # what it had saved stays
    replay = list(parse_lines(alice.get(f"/api/screenings/{sid}/stream").iter_lines()))
    assert kinds(replay)[-1] == "error" and replay[-1].data["code"] == "interrupted"
    assert [e.id for e in replay] == [str(i) for i in range(1, len(replay) + 1)]


def test_a_shutdown_tells_readers_to_resume_and_keeps_what_was_screened(app: Any, alice: TestClient,
                                                                        model: ScriptedModel) -> None:
    pid = create_patient(alice)["id"]
    model.judge = Script.stall(hold=10)
    with ExitStack() as stack:
        sid, events = open_screening(alice, stack, pid, nct_ids=TRIALS)
        assert alice.portal is not None
        alice.portal.call(app.state.screening.shutdown)
        rest = list(events)
    assert kinds(rest) == ["reconnect"]
    stored = alice.get(f"/api/screenings/{sid}").json()
    assert stored["status"] == "interrupted" and stored["error"]["retryable"] is True
    replay = list(parse_lines(alice.get(f"/api/screenings/{sid}/stream").iter_lines()))
    assert kinds(replay) == ["profile", "candidates", "error"]
