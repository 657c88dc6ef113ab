"""The upstream rate limits hold across instances: two limiters on one PostgreSQL database (as two app
instances, each with its own connection pool) together never reserve slots closer than the interval."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from backend.config import Settings
from backend.db.session import Database
from backend.sources import close_sources, get_sources
from backend.sources.shared_limit import SharedRateLimiter
from backend.sources.throttle import RateLimiter

INTERVAL = 0.05


@pytest.fixture
def pg_url(db_url: str) -> Iterator[str]:
    if not db_url.startswith("postgresql"):
        pytest.skip("the shared limit is PostgreSQL's; SQLite is one host and keeps the process's")
    yield db_url
    engine = sa.create_engine(db_url)
    with engine.begin() as conn:
        conn.execute(sa.text("DELETE FROM upstream_limits"))
    engine.dispose()


def _slots(limiter: SharedRateLimiter, n: int, into: list[float]) -> None:
    for _ in range(n):
        into.append(limiter.reserve()[0])


def test_two_instances_together_keep_the_interval(pg_url: str) -> None:
    instances = [Database(pg_url), Database(pg_url)]
    limiters = [SharedRateLimiter(db, "ncbi", INTERVAL) for db in instances]
    slots: list[list[float]] = [[], []]
    threads = [threading.Thread(target=_slots, args=(limiter, 20, into))
               for limiter, into in zip(limiters, slots, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    both = sorted(slots[0] + slots[1])
    assert len(both) == 40 and slots[0] and slots[1]
    gaps = [b - a for a, b in zip(both, both[1:], strict=False)]
    assert min(gaps) >= INTERVAL - 1e-6, min(gaps)
    for db in instances:
        db.dispose()


async def test_requests_through_two_instances_are_spaced(pg_url: str) -> None:
    instances = [Database(pg_url), Database(pg_url)]
    limiters = [SharedRateLimiter(db, "clinicaltrials.gov", INTERVAL) for db in instances]
    sent: list[float] = []

    async def request(limiter: SharedRateLimiter) -> None:
        await limiter.acquire()
        sent.append(time.monotonic())

    began = time.monotonic()
    await asyncio.gather(*(request(limiters[i % 2]) for i in range(10)))
    # Ten requests, the first at once: nine intervals at least, whichever instance sent each.
    assert max(sent) - began >= 9 * INTERVAL - 0.01
    for db in instances:
        db.dispose()


async def test_a_hold_off_on_one_instance_holds_the_other(pg_url: str) -> None:
    one, other = Database(pg_url), Database(pg_url)
    told = SharedRateLimiter(one, "ncbi", INTERVAL)
    told.hold_off(0.5)  # a 429 answered on the first instance
    await asyncio.sleep(0.1)  # (written in a thread)
    assert SharedRateLimiter(other, "ncbi", INTERVAL).reserve()[1] > 0.3
    one.dispose()
    other.dispose()


async def test_live_sources_share_their_limits_on_postgresql_only(db_url: str) -> None:
    await close_sources()
    db = Database(db_url)
    live = get_sources(Settings(COLLEAGUE_SOURCES="live"), db)
    limiter = live.trials._limiter  # type: ignore[attr-defined]
    if db_url.startswith("postgresql"):
        assert isinstance(limiter, SharedRateLimiter) and limiter.min_interval == 1.5
        assert isinstance(live.pubmed._limiter, SharedRateLimiter)  # type: ignore[attr-defined]
    else:
        assert type(limiter) is RateLimiter  # one host: the process's own
    await close_sources()
    db.dispose()
