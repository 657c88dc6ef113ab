"""A turn's event log: the one place a turn's events go, and where every reader reads them.

The generating task appends; each event gets the next id (1, 2, 3… — the SSE ids). Readers on this
worker follow the log in memory; the log is also written to `turn_events` in batches, so a reader on
another worker, a reload after the turn ended, or a restart after a crash replays the same events with
the same ids (`chat/turns.py` stores and reads them). An HTTP response is just one reader: a client
that leaves or freezes stops nothing.

An id is never reused. Readers on this worker get events before they are stored, so after a `kill -9`
a client may hold ids the database never saw; the worker that goes on with the turn (or ends it) numbers
after them. For that, readers are never handed an id more than `RESERVE` past what the turn's row says
is stored (`chat_turns.last_event_id`, the log's `floor` until its next save), and whoever takes a dead
worker's turn starts after `last_event_id + RESERVE` (`takeover.take_over`, `turns.interrupt_stale`).

Given a way to read its stored frames (`stored`), a log keeps in memory only what it still needs: the
frames not yet saved, and saved ones that a reader here has not passed. A reader that asks for older ones
(a resume with Last-Event-ID, one that attached late) reads those from the database, then follows in
memory. Kept whole, a running turn held every frame it had sent (benchmarks/README.md).
"""

from __future__ import annotations

import asyncio
import bisect
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from backend.agent.schemas import WireEvent

TERMINAL_TYPES = frozenset({"complete", "error"})
RESERVE = 1000  # ids readers may get ahead of the stored ones: ~2000 events/s at half-second checkpoints


@dataclass(frozen=True, slots=True)
class Frame:
    """One logged event as readers see it: its id, its type and its SSE `data`."""

    id: int
    type: str
    data: dict[str, Any]

    @property
    def terminal(self) -> bool:
        return self.type in TERMINAL_TYPES


class Closing(Exception):
    """The server is shutting down: readers end with a frame that asks the client to resume."""


class TurnLog:
    def __init__(self, turn_id: str, stored: Callable[[int], Awaitable[list[Frame]]] | None = None) -> None:
        self.turn_id = turn_id
        self.frames: list[Frame] = []  # in memory (see `stored`)
        self.saved = 0  # frames[:saved] are in the database
        self.floor = 0  # the turn's stored `last_event_id` when this log began (see RESERVE)
        self.stored = stored  # the stored frames after an id: saved frames no reader here needs are dropped
        self.dropped = 0  # the id of the last frame dropped from memory (0: none)
        self._saved_through = 0  # the id of the last frame saved
        self._readers: dict[object, int] = {}  # each reader here: the id it has read to
        self.next_id = 1
        self.finished = False
        self.closing = False
        self.sealed: int | None = None  # no reader is given a frame past this id (`seal`)
        self._waiting: list[asyncio.Future[None]] = []  # readers caught up with the log

    def append(self, event: WireEvent) -> Frame:
        frame = self.peek_next(event)
        self.next_id += 1
        self.frames.append(frame)
        self._wake()
        return frame

    def peek_next(self, event: WireEvent) -> Frame:
        """The frame `event` will be when appended (to save it before readers see it)."""
        return Frame(id=self.next_id, type=event.type, data=event.to_data())

    def go_on_from(self, stored: list[Frame], floor: int) -> None:
        """A turn another worker began: its stored events, then new ones numbered after `floor` (the
        highest id any reader of it may hold)."""
        self.frames = list(stored)
        self.saved = len(stored)
        self._saved_through = stored[-1].id if stored else 0
        self.floor = floor
        self.next_id = max(floor, stored[-1].id if stored else 0) + 1
        self._drop()

    def mark_saved(self, through: int) -> None:
        """The frames through id `through` are stored: readers may go that much further."""
        self.saved = max(self.saved, bisect.bisect_right(self.frames, through, key=lambda f: f.id))
        if self.saved:
            self._saved_through = max(self._saved_through, self.frames[self.saved - 1].id)
        self._drop()
        self._wake()

    def _drop(self) -> None:
        """Out of memory: the saved frames every reader here has passed (read again from `stored`)."""
        if self.stored is None or not self.saved:
            return
        upto = min(self._saved_through, *self._readers.values()) if self._readers else self._saved_through
        if (n := bisect.bisect_right(self.frames, upto, key=lambda f: f.id, hi=self.saved)) > 0:
            self.dropped = self.frames[n - 1].id
            del self.frames[:n]
            self.saved -= n

    @property
    def horizon(self) -> int:
        """The highest id a reader may be given now (see RESERVE)."""
        if self.sealed is not None:
            return self.sealed
        return max(self.floor, self._saved_through) + RESERVE

    def seal(self) -> None:
        """The turn's state is saved for another worker as of now: what is appended later (a runner still
        unwinding) is never sent, so no reader holds an event the worker going on with the turn can't know."""
        self.sealed = self.next_id - 1  # (frames saved and passed may be out of memory)

    def finish(self) -> None:
        self.finished = True
        self._wake()

    def close(self) -> None:
        """Shutdown: wake every reader so it can tell its client to resume elsewhere."""
        self.closing = True
        self._wake()

    def _wake(self) -> None:
        if self._waiting:
            waiting, self._waiting = self._waiting, []
            for reader in waiting:
                if not reader.done():  # a reader cancelled while it waited has gone
                    reader.set_result(None)

    def unsaved(self) -> list[Frame]:
        return self.frames[self.saved:]

    async def follow(self, after: int) -> AsyncIterator[Frame]:
        """Frames with id > `after`, then new ones as they come, until the terminal frame."""
        reader = object()
        self._readers[reader] = after
        try:
            while True:
                while after < self.dropped and self.stored is not None:  # out of memory: from the database
                    older = [f for f in await self.stored(after) if f.id <= self.dropped]
                    if not older:  # (never: a dropped frame was saved first) go on with what is in memory
                        after = self.dropped
                    for frame in older:
                        after = self._readers[reader] = frame.id
                        yield frame
                        if frame.terminal:
                            return
                n = bisect.bisect_right(self.frames, after, key=lambda f: f.id)
                while n < len(self.frames) and self.frames[n].id <= self.horizon and after >= self.dropped:
                    frame, dropped = self.frames[n], self.dropped
                    after = self._readers[reader] = frame.id
                    yield frame
                    if frame.terminal:
                        return
                    n = n + 1 if dropped == self.dropped else bisect.bisect_right(  # (frames dropped meanwhile)
                        self.frames, after, key=lambda f: f.id)
                if after < self.dropped:
                    continue
                if self.closing:  # (before `finished`: a turn suspended by the shutdown ends without a terminal)
                    raise Closing
                if self.finished:
                    return
                woken = asyncio.get_running_loop().create_future()
                self._waiting.append(woken)
                await woken
        finally:
            del self._readers[reader]
