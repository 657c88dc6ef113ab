"""Upstream rate limits held across every instance on one PostgreSQL.

CT.gov and NCBI count requests per client address (or per API key), not per process: N instances with a
limiter each would send N times the allowed rate. On PostgreSQL each request reserves the next free slot
of its upstream in one atomic statement on `upstream_limits` (the row lock orders concurrent callers; the
database's clock, so the hosts' clocks don't matter), then sleeps until it here. No other service is
needed. SQLite is one host (README): its processes keep the in-process `RateLimiter`.

If the database can't be asked, the request waits for this process's own slot instead (and says so in
the log): a search should not fail because its bookkeeping did.
"""

from __future__ import annotations

import asyncio
import logging
import time

import anyio
from sqlalchemy import text

from backend.db.session import Database
from backend.sources.throttle import Clock, RateLimiter, Sleep

log = logging.getLogger(__name__)

# The slot reserved is max(next free slot, now); the next free one is an interval after it. Returns the
# slot (epoch seconds, the database's clock) and the seconds to wait for it.
_RESERVE = text(
    "WITH now AS (SELECT extract(epoch FROM clock_timestamp())::float8 AS t) "
    "INSERT INTO upstream_limits AS u (name, next_slot) SELECT :name, t + :interval FROM now "
    "ON CONFLICT (name) DO UPDATE SET next_slot = greatest(u.next_slot, excluded.next_slot - :interval) + :interval "
    "RETURNING u.next_slot - :interval, u.next_slot - :interval - (SELECT t FROM now)")
_HOLD_OFF = text(
    "INSERT INTO upstream_limits AS u (name, next_slot) "
    "VALUES (:name, extract(epoch FROM clock_timestamp()) + :seconds) "
    "ON CONFLICT (name) DO UPDATE SET next_slot = greatest(u.next_slot, excluded.next_slot)")


class SharedRateLimiter(RateLimiter):
    """At most one request per `min_interval` seconds to the upstream `name`, across every instance."""

    def __init__(self, db: Database, name: str, min_interval: float, *,
                 clock: Clock = time.monotonic, sleep: Sleep = asyncio.sleep) -> None:
        super().__init__(min_interval, clock=clock, sleep=sleep)
        self.db = db
        self.name = name

    async def acquire(self) -> None:
        try:
            _slot, wait = await anyio.to_thread.run_sync(self.reserve)
        except Exception:  # noqa: BLE001 - reported; this process's own limiter still holds
            log.warning("the shared rate limit of %s could not be reserved; limiting this process only",
                        self.name, exc_info=True)
            await super().acquire()
            return
        with self._lock:  # a 429 this process saw holds it off too, even before the database has it
            wait = max(wait, self._next_slot - self.clock())
        if wait > 0:
            await self.sleep(wait)

    def reserve(self) -> tuple[float, float]:
        """Blocking: reserve the next slot; when it is (the database's clock) and the seconds until it."""
        with self.db.session() as s:
            slot, wait = s.execute(_RESERVE, {"name": self.name, "interval": self.min_interval}).one()
        return float(slot), float(wait)

    def hold_off(self, seconds: float) -> None:
        """After a 429: nobody on any instance calls before `seconds` from now."""
        super().hold_off(seconds)
        try:
            asyncio.get_running_loop().run_in_executor(None, self._hold_off, seconds)
        except RuntimeError:  # no loop (a blocking caller): write it here
            self._hold_off(seconds)

    def _hold_off(self, seconds: float) -> None:
        try:
            with self.db.session() as s:
                s.execute(_HOLD_OFF, {"name": self.name, "seconds": seconds})
        except Exception:  # noqa: BLE001 - this process holds off regardless
            log.warning("the shared hold-off of %s could not be stored", self.name, exc_info=True)
