"""The event loop's thread pool stays free beside many streams: turn writes
(checkpoints, final saves) run in a few threads of their own, so when the database's write lock is slow
they queue there, not in the shared pool that sync routes such as `/api/health` need. Deterministic: the
test holds the write lock itself and counts the shared pool's borrowed threads (the timings are in
`benchmarks/durable_streams.py`)."""

from __future__ import annotations

import functools
import gc
import time
import weakref
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
import sqlalchemy as sa
from starlette.testclient import TestClient

from backend.db.session import Database
from backend.demo.wire import Reply
from backend.main import _tune_collector, create_app
from tests.conftest import make_settings, signed_in, signed_in_for_test
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.fakes.fake_page import CONTEXT
from tests.sse import parse_lines

pytestmark = pytest.mark.usefixtures("test_registry")

TURNS = 45  # more than AnyIO's 40 default threads


@pytest.fixture
def unlimited(db_url: str, fake_llm: FakeAnthropic, db: Database) -> Iterator[TestClient]:
    """Alice on an app without per-user quotas, so one user can run TURNS answers at once."""
    app = create_app(make_settings(db_url, ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=fake_llm.url,
                                   COLLEAGUE_MAX_CONCURRENT_STREAMS=0, COLLEAGUE_TURNS_PER_MINUTE=0,
                                   COLLEAGUE_DAILY_TOKEN_BUDGET=0))
    yield from signed_in_for_test(app, db, "alice")


def write_lock(db_url: str) -> tuple[Any, Any]:
    """Hold the database's write lock from another connection (what a slow disk or a long writer does)."""
    engine = sa.create_engine(db_url)
    conn = engine.connect()
    if db_url.startswith("sqlite"):
        conn.exec_driver_sql("BEGIN IMMEDIATE")
    else:
        conn.exec_driver_sql("BEGIN")
        conn.exec_driver_sql("LOCK TABLE turn_events, chat_turns IN ACCESS EXCLUSIVE MODE")
    return engine, conn


def test_turn_writes_leave_the_shared_thread_pool_free(unlimited: TestClient, fake_llm: FakeAnthropic,
                                                       db_url: str) -> None:
    fake_llm.default = Script.answer(Reply.text(" ".join(["Still going."] * 3000)), delay=0.05)
    conversations = []
    for i in range(TURNS):  # start each turn, read its first event, leave: the turns go on
        with unlimited.stream("POST", "/api/chat/stream", json={"message": f"q{i}", "context": CONTEXT}) as r:
            assert r.status_code == 200
            conversations.append(next(iter(parse_lines(r.iter_lines()))).data["conversation_id"])
    portal = unlimited.portal
    assert portal is not None

    def borrowed() -> int:
        return int(portal.call(lambda: anyio.to_thread.current_default_thread_limiter().borrowed_tokens))

    engine, conn = write_lock(db_url)
    try:
        peak = 0
        until = time.monotonic() + 3  # several checkpoint rounds of every turn queue on the lock
        while time.monotonic() < until:
            peak = max(peak, borrowed())
            time.sleep(0.05)
    finally:
        conn.rollback()
        conn.close()
        engine.dispose()
    for cid in conversations:
        assert unlimited.post(f"/api/conversations/{cid}/stop").status_code == 200
    limit = portal.call(lambda: anyio.to_thread.current_default_thread_limiter().total_tokens)
    print(f"shared pool: at most {peak} of {limit} threads borrowed while {TURNS} turns waited to write")
    assert peak < limit - 20, peak  # sync routes still have threads



def _name(func: Any) -> str:
    """`current_user`, `list_conversations` (a partial unwrapped: FastAPI's and ours)."""
    if isinstance(func, functools.partial):
        func = func.keywords.get("function", func.func)
    return getattr(func, "__qualname__", repr(func))


@pytest.fixture
def hops(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The functions the app sends to a worker thread, in order. Each hop waits for a turn of the event
    loop to come back, which beside a hundred streams is what an ordinary request waits for."""
    seen: list[str] = []
    real = anyio.to_thread.run_sync

    async def counted(func: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(_name(func))
        return await real(func, *args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counted)
    return seen


def test_a_turn_begins_in_one_thread_hop(alice: TestClient, fake_llm: FakeAnthropic, hops: list[str]) -> None:
    """Session check, quotas and the turn's transaction in one hop; the dependencies that only
    read the app's state (the database, the chat service) in none, and a sync endpoint with the validation
    of what it returns in one (`backend/routing.py`), on every route."""
    fake_llm.default = Script.answer(Reply.text("Hello there."))
    with alice.stream("POST", "/api/chat/stream", json={"message": "hello", "context": CONTEXT}) as r:
        assert r.status_code == 200
        events = list(parse_lines(r.iter_lines()))
    assert events[0].event == "conversation" and events[-1].event == "complete"
    assert hops[0] == "ChatService._begin", hops
    assert "current_user" not in hops and not any("admit" in h for h in hops), hops

    hops.clear()
    assert alice.get("/api/conversations?app=tablizer").status_code == 200
    assert hops == ["current_user", "list_conversations"], hops  # the endpoint and its validation: one hop
    hops.clear()
    resumed = alice.get(f"/api/conversations/{events[0].data['conversation_id']}/stream",
                        headers={"Last-Event-ID": "1"})
    assert resumed.status_code == 200
    assert hops[0] == "ChatService.resume.<locals>.find", hops


def test_the_collector_never_walks_what_start_up_built(alice: TestClient) -> None:
    """A started app has frozen its start-up objects and runs full collections 10× less often than the
    default (the loop stopped 200–300 ms, then 25–40 ms, every few seconds beside 100 streams)."""
    assert gc.get_freeze_count() > 100_000
    assert gc.get_threshold()[2] == 100


def test_an_app_that_has_stopped_is_freed(db_url: str, fake_llm: FakeAnthropic, db: Database) -> None:
    """Nothing process-wide keeps a stopped app (and its engine, registry and pydantic models) alive: the
    test suite builds an app per test, and when FastAPI's process-wide cache of endpoint callables held
    each one, the heap grew by ~6k objects a test and full collections stopped every thread for 2–3 s —
    long enough for a turn with a one-second idle timeout to stall before its request was sent."""
    _tune_collector()  # as a started app does, once per process: what exists now is frozen (not this app)
    app = create_app(make_settings(db_url, ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=fake_llm.url))
    fake_llm.default = Script.answer(Reply.text("Hello there."))
    client = signed_in(app, db, "alice")  # started (lifespan), signed in
    try:
        assert client.get("/api/health").json()["database"] == "ok"
        assert client.get("/", headers={"Accept": "text/html"}).status_code in (200, 503)
        with client.stream("POST", "/api/chat/stream", json={"message": "hello", "context": CONTEXT}) as r:
            assert list(parse_lines(r.iter_lines()))[-1].event == "complete"
    finally:
        client.__exit__(None, None, None)
    gone = weakref.ref(app)
    del app, client, r
    gc.collect()
    assert gone() is None, [type(r).__qualname__ for r in gc.get_referrers(gone())]
