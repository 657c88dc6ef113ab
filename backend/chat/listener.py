"""This process's one `LISTEN` connection (PostgreSQL): notifications handed to in-process handlers.

However many readers wait, a process holds one listening connection (psycopg 3, async, outside the
pool), and its notifications are fanned out in memory (`chat/fanout.py`). PostgreSQL does not replay
what was sent while nobody listened: when the connection is lost it is opened again (backing off up to
`RETRY_MAX`), and `on_connect` is called each time it listens, so whoever depends on it catches up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo
from sqlalchemy.engine import make_url

from backend.chat.notify import turn_ids

log = logging.getLogger(__name__)

RETRY_FIRST, RETRY_MAX = 0.05, 2.0  # seconds before listening again after a lost connection (doubling)
# Named, for pg_stat_activity; keepalives end a connection whose peer vanished without a word.
CONNECTION: dict[str, str | int] = {"application_name": "colleague-listener", "keepalives": 1, "keepalives_idle": 20,
              "keepalives_interval": 5, "keepalives_count": 3}


class Listener:
    def __init__(self, url: str, handlers: Mapping[str, Callable[[list[str]], None]],
                 on_connect: Callable[[], None]) -> None:
        self.conninfo = make_conninfo(make_url(url).set(drivername="postgresql").render_as_string(hide_password=False),
                                      **CONNECTION)
        self.handlers = dict(handlers)
        self.on_connect = on_connect
        self.connected = False
        self.backend_pid: int | None = None  # the listening session's, as pg_stat_activity shows it
        self.connections = 0  # times it began listening (1 + reconnects)
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        if not self.running:
            self._task = asyncio.create_task(self._run(), name="turn-listener")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            if task.get_loop() is asyncio.get_running_loop():  # (tests start an app on several loops)
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self.connected = False

    async def _run(self) -> None:
        delay = RETRY_FIRST
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True)
                try:
                    for channel in self.handlers:
                        await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
                    self.backend_pid, self.connected, delay = conn.info.backend_pid, True, RETRY_FIRST
                    self.connections += 1
                    self.on_connect()  # what was sent while nobody listened is caught up by a read
                    async for note in conn.notifies():
                        self._dispatch(note.channel, note.payload)
                finally:
                    self.connected = False
                    await conn.close()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - a lost connection is listened on again
                log.warning("the turn listener lost its connection (%s); listening again in %.2f s",
                            type(exc).__name__, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX)

    def _dispatch(self, channel: str, payload: str) -> None:
        try:
            self.handlers[channel](turn_ids(payload))
        except Exception:  # one handler's bug must not cost every reader its wake-ups
            log.exception("handling a notification on %s failed", channel)
