"""Progress saves of all of a worker's running turns, batched: each turn every `every` seconds.

Every half second each running turn has new events for `turn_events` and a higher `last_event_id`, and
now and then the answer so far (what a checkpoint writes: `chat/turns.py`). Written turn by turn that
is a thread hop and a commit per turn per checkpoint; written together it is one hop, one commit and a
few statements for many turns. The turns are dealt into `SLICES` slices written one after another (a
fifth of them every tenth of a second): written all at once, they made one long burst in a thread, and
the GETs that fell into it waited for the GIL (benchmarks/README.md). A turn that ends leaves the batch
first (`leave` waits for a write that holds its events), so its final save never races one.

A turn read on another instance (announced there: `watch`, `chat/fanout.py`) is written eagerly
instead: its new events at most `flush_every` apart (all such turns in one transaction, which notifies
their readers), so a remote reader lags a local one by that and a round trip, not a checkpoint.

A drain stops every turn at once, and each saves itself `suspended` (`suspend`): those are written
together too, each write taking every suspension that came while the one before ran. One transaction
each, 100 turns queued for a few threads and missed the drain's seconds; a turn left running then has
its worker's death to wait for and ids a reserve apart (`chat/log.py`) instead of a clean takeover.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref
from collections.abc import Iterable
from typing import Protocol

import anyio
from sqlalchemy.exc import IntegrityError

from backend.chat import turns
from backend.chat.log import TurnLog
from backend.chat.turns import Progress, Suspension
from backend.db.session import Database
from backend.observability.observe import checkpoint

log = logging.getLogger(__name__)
WATCHED_FOR = 6.0  # seconds an announcement of remote readers lasts (they renew it: `chat/fanout.py`)
YIELD_EVERY = 10  # turns whose progress is gathered before other work on the event loop gets a turn
SLICES = 5  # a turn's checkpoints are `every` apart; the worker writes one slice of its turns `every / SLICES` apart
FLUSH_WAIT = 1.0  # seconds a turn's end waits at most for the eager write of its last events (`flush`)
PERSIST_THREADS = 4  # threads a worker's turns may write in at once (see `persist_limiter`)
_limiters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, anyio.CapacityLimiter] = weakref.WeakKeyDictionary()


def persist_limiter() -> anyio.CapacityLimiter:
    """The worker's own few threads for turn writes (checkpoints, final saves). Without them, 100 streams
    whose writes queue on the database's write lock fill AnyIO's shared pool (40 threads), and every sync
    route — `/api/health`, the conversation list — waits seconds for a thread. With them a turn's saves
    just come further apart under load."""
    loop = asyncio.get_running_loop()
    if (limiter := _limiters.get(loop)) is None:
        limiter = _limiters[loop] = anyio.CapacityLimiter(PERSIST_THREADS)
    return limiter


def _settle(done: asyncio.Future[None]) -> None:
    """Resolve `done` on its own loop (a test's second client runs its turns on a loop of its own)."""
    def resolve() -> None:
        if not done.done():  # (one that timed out was cancelled)
            done.set_result(None)

    loop = done.get_loop()
    try:
        here: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        here = None
    if here is loop:
        resolve()
    elif not loop.is_closed():
        loop.call_soon_threadsafe(resolve)


class Saving(Protocol):
    """A running turn as the writer sees it."""

    log: TurnLog

    def progress(self) -> Progress | None:
        """What is new since the last save (None: nothing)."""


class ProgressWriter:
    def __init__(self, db: Database, every: float = 0.5, flush_every: float = 0.025) -> None:
        self.db = db
        self.every = every
        self.flush_every = flush_every  # a watched turn's events are written at most this far apart
        self._turns: dict[Saving, int] = {}  # each running turn, and its slice
        self._watched: dict[str, float] = {}  # turn id → until when (monotonic) it has readers elsewhere
        self._eager: set[Saving] = set()  # watched turns with events to write
        self._nudge: asyncio.Event | None = None  # wakes the writer for an eager write
        self._loop: asyncio.AbstractEventLoop | None = None
        self._joined = 0
        self._writing: set[Saving] = set()  # in the write under way
        self._written: asyncio.Event | None = None  # set when the write under way is over
        self._task: asyncio.Task[None] | None = None
        self._suspensions: list[tuple[Suspension, asyncio.Future[bool]]] = []
        self._suspender: asyncio.Task[None] | None = None
        self._flushing: dict[Saving, list[asyncio.Future[None]]] = {}  # turns waiting for their eager write

    def join(self, turn: Saving) -> None:
        self._turns.setdefault(turn, self._joined % SLICES)
        self._joined += 1
        if self._task is None or self._task.done():
            self._loop, self._nudge = asyncio.get_running_loop(), asyncio.Event()
            self._task = asyncio.create_task(self._run(), name="progress-writer")

    def watch(self, turn_ids: Iterable[str], seconds: float = WATCHED_FOR) -> None:
        """Readers on another instance announced these turns: write their events eagerly for `seconds`."""
        now = time.monotonic()
        self._watched = {t: until for t, until in self._watched.items() if until > now}
        self._watched.update(dict.fromkeys(turn_ids, now + seconds))
        for turn in list(self._turns):
            if turn.log.unsaved():
                self.appended(turn)

    def appended(self, turn: Saving) -> None:
        """The turn logged an event: written soon if someone reads it elsewhere, else at its checkpoint."""
        until = self._watched.get(turn.log.turn_id)
        if until is None or turn not in self._turns:
            return
        if until < time.monotonic():
            del self._watched[turn.log.turn_id]
            return
        if not self._eager and self._loop is not None and self._nudge is not None:
            try:
                here = asyncio.get_running_loop()
            except RuntimeError:
                here = None
            if here is self._loop:
                self._nudge.set()
            else:  # (a test's second client runs its requests on a loop of its own)
                self._loop.call_soon_threadsafe(self._nudge.set)
        self._eager.add(turn)

    async def flush(self, turn: Saving) -> None:
        """A watched turn whose model is done: its last events (`usage`, the context meter) written in the
        next eager batch, with the other turns ending then, before it leaves to write its end alone. Its
        remote readers get them as they get its text, not behind the final saves, which queue on the
        persist threads when many turns end at once."""
        self.appended(turn)
        if turn not in self._eager:  # not read elsewhere (or nothing new): the final save writes it all
            return
        done = asyncio.get_running_loop().create_future()
        self._flushing.setdefault(turn, []).append(done)
        # Bounded: a writer that never gets to it (stopped at shutdown) must not hold the turn's end.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done, FLUSH_WAIT)

    async def leave(self, turn: Saving) -> None:
        """The turn saves the rest itself: out of the batch, after any write that holds its events."""
        self._turns.pop(turn, None)
        if turn in self._writing and self._written is not None:
            await self._written.wait()

    async def _run(self) -> None:
        assert self._nudge is not None
        loop = asyncio.get_running_loop()
        tick, flushed = 0, 0.0
        next_tick = loop.time() + self.every / SLICES
        while self._turns:
            due = min(next_tick, flushed + self.flush_every) if self._eager else next_tick
            if (wait := due - loop.time()) > 0:
                self._nudge.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._nudge.wait(), wait)
                continue
            chosen, self._eager = list(self._eager), set()
            if ticked := loop.time() >= next_tick:  # this slice's checkpoints (and the eager turns with them)
                tick = (tick + 1) % SLICES
                chosen += [turn for turn, slice_ in self._turns.items() if slice_ == tick and turn not in chosen]
            else:
                flushed = loop.time()
            try:
                await self._save(chosen)
            finally:
                for turn in chosen:
                    for done in self._flushing.pop(turn, []):
                        _settle(done)
            if ticked:  # the next slice a step after this write: under load, saves come further apart
                next_tick = loop.time() + self.every / SLICES

    async def _save(self, turns_: list[Saving]) -> None:
        """Their progress, gathered on the event loop, written in one transaction in a thread."""
        batch = []
        for i, turn in enumerate(turns_):
            if i and i % YIELD_EVERY == 0:
                await asyncio.sleep(0)  # let requests in between: a batch is built on the event loop
            if (p := turn.progress()) is not None:
                batch.append((turn, p))
        batch = [(turn, p) for turn, p in batch if turn in self._turns]  # one that left saves its own
        if not batch:
            return
        self._writing, self._written = {turn for turn, _ in batch}, asyncio.Event()
        # Shielded: a write that has started is counted before a turn's final save writes the rest.
        with anyio.CancelScope(shield=True):
            try:
                with checkpoint(len(batch)):
                    saved = await anyio.to_thread.run_sync(self._write, [p for _, p in batch],
                                                           limiter=persist_limiter())
            except Exception:  # a missed checkpoint is retried with the next one
                log.exception("progress save of %d turns failed", len(batch))
            else:
                for turn, p in batch:
                    if p.turn_id in saved:
                        turn.log.mark_saved(p.frames[-1].id)
            finally:
                self._writing = set()
                self._written.set()

    async def suspend(self, turn: Suspension) -> bool:
        """Save a turn stopped by a shutdown `suspended`, with the others stopping now; True when saved."""
        saved = asyncio.get_running_loop().create_future()
        self._suspensions.append((turn, saved))
        if self._suspender is None or self._suspender.done():
            self._suspender = asyncio.create_task(self._write_suspensions(), name="suspension-writer")
        return await saved

    async def _write_suspensions(self) -> None:
        while self._suspensions:
            batch, self._suspensions = self._suspensions, []
            try:
                saved = await anyio.to_thread.run_sync(self._suspend, [t for t, _ in batch], limiter=persist_limiter())
            except Exception:  # the turns stay running: a live worker takes them over once this one is gone
                log.exception("suspending %d turns failed", len(batch))
                saved = set()
            for turn, done in batch:
                if not done.done():
                    done.set_result(turn.turn_id in saved)

    def suspend_now(self, batch: list[Suspension]) -> set[str]:
        """The drain's last resort (`Supervisor.shutdown`): these turns suspended now, in the caller's thread."""
        return self._suspend(batch)

    def _suspend(self, batch: list[Suspension]) -> set[str]:
        """The batch in one transaction; if that fails, each turn alone (one turn never costs the others)."""
        try:
            with self.db.session() as s:
                return turns.save_suspended(s, batch)
        except Exception:
            if len(batch) == 1:
                raise
            log.exception("suspending %d turns together failed; one by one", len(batch))
        saved: set[str] = set()
        for turn in batch:
            try:
                with self.db.session() as s:
                    saved |= turns.save_suspended(s, [turn])
            except Exception:
                log.exception("suspending turn %s failed", turn.turn_id)
        return saved

    def _write(self, batch: list[Progress]) -> set[str]:
        """The batch in one transaction; if a turn's events conflict (its lease lapsed under overload and
        the sweep wrote its end), each turn alone, so that one turn never costs the others their saves.
        Returns the ids of the turns saved."""
        try:
            self._write_together(batch)
            return {p.turn_id for p in batch}
        except IntegrityError:
            if len(batch) == 1:
                raise
        saved = set()
        for p in batch:
            try:
                self._write_together([p])
                saved.add(p.turn_id)
            except IntegrityError:
                log.warning("progress of turn %s conflicts with what is stored; not saved", p.turn_id)
        return saved

    def _write_together(self, batch: list[Progress]) -> None:
        with self.db.session() as s:
            turns.save_progress(s, batch)
