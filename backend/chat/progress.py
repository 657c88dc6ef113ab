"""Progress saves of all of a worker's running turns, batched: each turn every `every` seconds.

Every half second each running turn has new events for `turn_events` and a higher `last_event_id`, and
now and then the answer so far (what a checkpoint writes: `chat/turns.py`). Written turn by turn that
is a thread hop and a commit per turn per checkpoint; written together it is one hop, one commit and a
few statements for many turns. The turns are dealt into `SLICES` slices written one after another (a
fifth of them every tenth of a second): written all at once, they made one long burst in a thread, and
the GETs that fell into it waited for the GIL (benchmarks/README.md). A turn that ends leaves the batch
first (`leave` waits for a write that holds its events), so its final save never races one.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import Protocol

import anyio
from sqlalchemy.exc import IntegrityError

from backend.chat import turns
from backend.chat.log import TurnLog
from backend.chat.turns import Progress
from backend.db.session import Database
from backend.observability.observe import checkpoint

log = logging.getLogger(__name__)
YIELD_EVERY = 10  # turns whose progress is gathered before other work on the event loop gets a turn
SLICES = 5  # a turn's checkpoints are `every` apart; the worker writes one slice of its turns `every / SLICES` apart
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


class Saving(Protocol):
    """A running turn as the writer sees it."""

    log: TurnLog

    def progress(self) -> Progress | None:
        """What is new since the last save (None: nothing)."""


class ProgressWriter:
    def __init__(self, db: Database, every: float = 0.5) -> None:
        self.db = db
        self.every = every
        self._turns: dict[Saving, int] = {}  # each running turn, and its slice
        self._joined = 0
        self._writing: set[Saving] = set()  # in the write under way
        self._written: asyncio.Event | None = None  # set when the write under way is over
        self._task: asyncio.Task[None] | None = None

    def join(self, turn: Saving) -> None:
        self._turns.setdefault(turn, self._joined % SLICES)
        self._joined += 1
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name="progress-writer")

    async def leave(self, turn: Saving) -> None:
        """The turn saves the rest itself: out of the batch, after any write that holds its events."""
        self._turns.pop(turn, None)
        if turn in self._writing and self._written is not None:
            await self._written.wait()

    async def _run(self) -> None:
        tick = 0
        while self._turns:
            await asyncio.sleep(self.every / SLICES)
            tick = (tick + 1) % SLICES
            batch = []
            for i, turn in enumerate([turn for turn, slice_ in self._turns.items() if slice_ == tick]):
                if i and i % YIELD_EVERY == 0:
                    await asyncio.sleep(0)  # let requests in between: a batch is built on the event loop
                if (p := turn.progress()) is not None:
                    batch.append((turn, p))
            batch = [(turn, p) for turn, p in batch if turn in self._turns]  # one that left saves its own
            if not batch:
                continue
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
