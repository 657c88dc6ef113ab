"""Readers of turns that run on another instance (or ran before): this process's, all served at once.

A turn's events reach `turn_events` in the generating worker's checkpoints (`chat/progress.py`). Here
each such turn read in this process has one `Feed`, its stored events fetched once for all of its
readers, and one task (the pump) fetches for every feed together, in one transaction:

- when woken: on PostgreSQL by a notification (`chat/notify.py` EVENTS, sent with each batch of stored
  events; received on the process's one listening connection, `chat/listener.py`). A feed reads nothing
  while nothing happens, and 100 readers cost the database what one does.
- as a safety poll (`safety_seconds`) for what PostgreSQL does not replay (sent while the listener
  reconnected); without a listener (SQLite: one host; or while it reconnects) every `POLL_SECONDS`.
- every `STALE_SECONDS`, whether the feeds' turns still run: a turn whose worker is gone is continued
  here or ended (`on_stale`), and one that is over without a stored end gets it from the database. A
  turn a draining instance suspended is checked at once (notified on STATES): its readers, told to
  resume by that instance and resumed here before it saved the turn, would otherwise wait for the check.

A reader announces itself: the turns read here are sent on READERS at once and every `WATCH_EVERY`,
and the instance generating one writes its events out eagerly while announced (`ProgressWriter.watch`),
so a remote reader does not wait for the half-second checkpoint. Ids are the stored ones: a feed holds
a turn's events in order, each once, and a reader yields those after its `after`.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from sqlalchemy import JSON, Integer, String, bindparam, column, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from backend.chat.listener import Listener
from backend.chat.log import Closing, Frame
from backend.chat.notify import EVENTS, READERS, STATES, notify
from backend.chat.turn import LIVE
from backend.chat.workers import WorkerPresence
from backend.db.base import utcnow
from backend.db.models import ChatTurn, Conversation, TurnEvent
from backend.db.session import Database

log = logging.getLogger(__name__)

POLL_SECONDS = 0.25  # without a listener: how often the feeds are read
STALE_SECONDS = 2.0  # how often the feeds' turns are checked for a worker that is gone
WATCH_EVERY = 2.0  # seconds between announcements of the turns read here

_STATUS = (select(ChatTurn.id, ChatTurn.status, ChatTurn.worker_id, Conversation.active_turn_id,
                  Conversation.active_turn_expires_at)
           .join(Conversation, Conversation.id == ChatTurn.conversation_id)
           .where(ChatTurn.id.in_(bindparam("ids", expanding=True))))
_AFTER = (select(TurnEvent.seq, TurnEvent.type, TurnEvent.data)
          .where(TurnEvent.turn_id == bindparam("turn"), TurnEvent.seq > bindparam("after")).order_by(TurnEvent.seq))
# PostgreSQL: the new events of every feed in one statement.
_AFTER_EACH = text(
    "SELECT e.turn_id, e.seq, e.type, e.data FROM turn_events AS e "
    "JOIN unnest(CAST(:ids AS varchar[]), CAST(:afters AS integer[])) AS w(tid, seen) "
    "ON e.turn_id = w.tid AND e.seq > w.seen ORDER BY e.turn_id, e.seq"
).columns(column("turn_id", String), column("seq", Integer), column("type", String), column("data", JSON))


def _in_loop(loop: asyncio.AbstractEventLoop, call: Callable[[], Any]) -> None:
    """`call` on `loop` (tests run one app's requests on several loops; production on one)."""
    try:
        here = asyncio.get_running_loop()
    except RuntimeError:
        here = None
    if here is loop:
        call()
    elif not loop.is_closed():
        loop.call_soon_threadsafe(call)


def _resolve(reader: asyncio.Future[None]) -> None:
    if not reader.done():  # a reader cancelled while it waited has gone
        reader.set_result(None)


class Feed:
    """One turn as this process's readers of it see it: its stored events, fetched once for all of them."""

    def __init__(self, turn_id: str) -> None:
        self.turn_id = turn_id
        self.frames: list[Frame] = []
        self.readers = 0
        self.fetched = False
        self.ended = False  # its terminal event is in `frames`
        self.settled = False  # over, with no stored end: each reader asks the database (`frames_for_reader`)
        self.version = 0
        self._waiting: list[asyncio.Future[None]] = []

    @property
    def last(self) -> int:
        return self.frames[-1].id if self.frames else 0

    def after(self, n: int) -> list[Frame]:
        return self.frames[bisect.bisect_right(self.frames, n, key=lambda f: f.id):]

    def add(self, frames: list[Frame]) -> None:
        new = [f for f in frames if f.id > self.last]
        if new:
            self.frames.extend(new)
            self.ended = self.ended or any(f.terminal for f in new)
            self.changed()

    def changed(self) -> None:
        self.version += 1
        waiting, self._waiting = self._waiting, []
        for reader in waiting:
            _in_loop(reader.get_loop(), functools.partial(_resolve, reader))

    async def wait(self, seen: int) -> None:
        """Until anything changed since `seen` (its `version` then)."""
        if self.version == seen:
            woken = asyncio.get_running_loop().create_future()
            self._waiting.append(woken)
            await woken


@dataclass
class Fetched:
    frames: dict[str, list[Frame]] = field(default_factory=dict)
    over: set[str] = field(default_factory=set)  # ended, or gone
    stale: set[str] = field(default_factory=set)  # live, and its worker gone, its lease lapsed, or suspended


class Fanout:
    def __init__(self, db: Database, presence: WorkerPresence, *, on_stale: Callable[[str], Awaitable[None]],
                 on_readers: Callable[[list[str]], None], safety_seconds: float = 2.0) -> None:
        self.db = db
        self.presence = presence
        self.on_stale = on_stale  # a feed's turn whose worker is gone: go on with it here, or end it
        self.on_readers = on_readers  # turns that instances announced they read (`ProgressWriter.watch`)
        self.safety_seconds = safety_seconds
        self.postgres = make_url(db.url).get_backend_name() == "postgresql"
        self.listener: Listener | None = None
        self.feeds: dict[str, Feed] = {}
        self.closing = False
        self.reads = 0  # transactions the pump ran (tests, benchmarks)
        self._dirty: set[str] = set()  # feeds to fetch
        self._new: set[str] = set()  # feeds to announce at once
        self._check: set[str] = set()  # feeds whose turns' states to check at once (STATES)
        self._kick: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None

    # -- the listener --------------------------------------------------------------------------------
    def listen(self) -> None:
        """Start this process's listening connection (PostgreSQL; at start-up, in the app's loop)."""
        if not self.postgres:
            return
        if self.listener is None:
            self.listener = Listener(self.db.url, {EVENTS: self.notified, READERS: self.on_readers,
                                                   STATES: self.state_changed}, self.missed)
        self.listener.start()

    async def stop(self) -> None:
        if self.listener is not None:
            await self.listener.stop()

    @property
    def listening(self) -> bool:
        return self.listener is not None and self.listener.connected

    def notified(self, turn_ids: list[str]) -> None:
        """EVENTS: these turns stored new events."""
        if dirty := [t for t in turn_ids if t in self.feeds]:
            self._dirty.update(dirty)
            self._wake_pump()

    def state_changed(self, turn_ids: list[str]) -> None:
        """STATES: these turns were suspended; whether to go on with them here is checked now."""
        if changed := [t for t in turn_ids if t in self.feeds]:
            self._check.update(changed)
            self._wake_pump()

    def missed(self) -> None:
        """The listener (re)connected: whatever was sent before is read now."""
        self._dirty.update(self.feeds)
        self._new.update(self.feeds)
        self._wake_pump()

    def close(self) -> None:
        """Shutdown: every reader ends with a frame that asks its client to resume."""
        self.closing = True
        for feed in list(self.feeds.values()):
            feed.changed()

    # -- readers -------------------------------------------------------------------------------------
    async def follow(self, turn_id: str, after: int,
                     read: Callable[[int], Awaitable[list[Frame]]]) -> AsyncIterator[Frame]:
        """The turn's frames with id > `after`, until its terminal one. `read(n)` is the database's
        answer for one reader (`turns.frames_for_reader`), asked only for a turn over without a stored
        end. Ends by raising `Closing` when this server shuts down first."""
        feed = self._join(turn_id)
        try:
            n = after
            while True:
                seen = feed.version
                # Over with no stored end, or ended before `n` (ids past it): the database renumbers its end.
                over = feed.settled or (feed.ended and n >= feed.last)
                frames = await read(n) if over else feed.after(n)
                for frame in frames:
                    n = frame.id
                    yield frame
                    if frame.terminal:
                        return
                if frames:
                    continue
                if self.closing:
                    raise Closing
                if feed.settled:  # nothing stored after `n` of a turn that is over: a take-over may add some
                    await asyncio.sleep(POLL_SECONDS)
                    continue
                await feed.wait(seen)
        finally:
            self._leave(feed)

    def _join(self, turn_id: str) -> Feed:
        feed = self.feeds.get(turn_id)
        if feed is None:
            feed = self.feeds[turn_id] = Feed(turn_id)
            self._dirty.add(turn_id)
            self._new.add(turn_id)
        feed.readers += 1
        if self._task is None or self._task.done():
            self._loop, self._kick = asyncio.get_running_loop(), asyncio.Event()
            self._task = self._loop.create_task(self._pump(), name="turn-fanout")
        self._wake_pump()
        return feed

    def _leave(self, feed: Feed) -> None:
        feed.readers -= 1
        if feed.readers <= 0 and self.feeds.get(feed.turn_id) is feed:
            del self.feeds[feed.turn_id]

    def _wake_pump(self) -> None:
        if self._loop is not None and self._kick is not None:
            _in_loop(self._loop, self._kick.set)

    # -- the pump ------------------------------------------------------------------------------------
    async def _pump(self) -> None:
        assert self._kick is not None
        loop = asyncio.get_running_loop()
        polled = checked = announced = loop.time()
        while self.feeds:
            now = loop.time()
            poll_every = self.safety_seconds if self.listening else POLL_SECONDS
            due = min(polled + poll_every, checked + STALE_SECONDS,
                      announced + WATCH_EVERY if self.listening else float("inf"))
            if not (self._dirty or self._new or self._check) and due > now:
                self._kick.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._kick.wait(), due - now)
                continue
            if now >= polled + poll_every:
                polled = now
                self._dirty.update(self.feeds)
            check = now >= checked + STALE_SECONDS
            checked = now if check else checked
            announce = {t for t in self._new if t in self.feeds}
            if self.listening and now >= announced + WATCH_EVERY:
                announced = now
                announce |= {t for t, f in self.feeds.items() if not f.ended}
            dirty = {t: f for t in self._dirty if (f := self.feeds.get(t)) is not None}
            now_too = {t for t in self._check if t in self.feeds}
            self._dirty, self._new, self._check = set(), set(), set()
            statuses = set(self.feeds) if check else {t for t, f in dirty.items() if not f.fetched} | now_too
            check = check or bool(now_too)
            try:
                got = await anyio.to_thread.run_sync(self._read, {t: f.last for t, f in dirty.items()},
                                                     statuses, check, announce)
            except Exception:  # the database blinked: read again shortly
                log.exception("reading the events of %d turns failed", len(dirty))
                self._dirty.update(dirty)
                self._new.update(announce)
                self._check.update(now_too)
                await asyncio.sleep(POLL_SECONDS)
                continue
            self.reads += 1
            for turn_id, feed in dirty.items():
                feed.fetched = True
                feed.add(got.frames.get(turn_id, []))
            for turn_id in statuses:
                if (known := self.feeds.get(turn_id)) is not None and known.settled != (
                        settled := turn_id in got.over and not known.ended):
                    known.settled = settled
                    known.changed()
            for turn_id in got.stale:
                if turn_id in self.feeds:
                    try:
                        await self.on_stale(turn_id)
                    except Exception:
                        log.exception("ending turn %s, whose worker is gone, failed", turn_id)
                    self._dirty.add(turn_id)

    def _read(self, after: dict[str, int], statuses: set[str], check: bool, announce: set[str]) -> Fetched:
        """One transaction: the turns' states (first: a turn over has its end stored by then), their
        new events, and the announcement of the turns read here."""
        got = Fetched()
        with self.db.session() as s:
            if statuses:
                rows = s.execute(_STATUS, {"ids": list(statuses)}).all()
                live = [r for r in rows if r.status in LIVE]
                got.over = statuses - {r.id for r in live}
                if check and live:
                    dead = self.presence.dead(s, {r.worker_id for r in live})
                    now = utcnow()
                    got.stale = {r.id for r in live if r.status == "suspended" or r.worker_id in dead
                                 or r.active_turn_id != r.id or r.active_turn_expires_at is None
                                 or r.active_turn_expires_at < now}
            got.frames = self._events(s, after)
            notify(s, READERS, announce)
        return got

    def _events(self, s: Session, after: dict[str, int]) -> dict[str, list[Frame]]:
        found: dict[str, list[Frame]] = {}
        if not after:
            return found
        if self.postgres:
            rows = s.execute(_AFTER_EACH, {"ids": list(after), "afters": list(after.values())})
            for turn_id, seq, type_, data in rows:
                found.setdefault(turn_id, []).append(Frame(id=seq, type=type_, data=data))
            return found
        for turn_id, n in after.items():
            found[turn_id] = [Frame(id=seq, type=type_, data=data)
                              for seq, type_, data in s.execute(_AFTER, {"turn": turn_id, "after": n})]
        return found
