"""Engine and short-lived sessions.

Services open a session per persistence point (`with db.session() as s`), never one held across a
streamed turn. SQLite gets WAL, `synchronous=NORMAL` (no fsync per commit; WAL keeps the file consistent)
and a busy timeout so concurrent turns don't trip over each other.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker


def make_engine(url: str, foreign_keys: bool = True, **kwargs: Any) -> Engine:
    """`foreign_keys=False` is for migrations: SQLite rebuilds a table to alter it, and dropping the old
    copy with foreign keys enforced would cascade-delete the rows that point at it."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30}, **kwargs)

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")  # under WAL: durable across a crash of the app, and a
            # commit no longer waits for an fsync (a power cut may lose the last commits, not the database)
            cur.execute("PRAGMA busy_timeout=30000")
            cur.execute(f"PRAGMA foreign_keys={'ON' if foreign_keys else 'OFF'}")
            cur.close()

        _one_writer_at_a_time(engine)
        return engine
    kwargs.setdefault("pool_size", 10)
    kwargs.setdefault("max_overflow", 20)
    return create_engine(url, pool_pre_ping=True, **kwargs)


def _one_writer_at_a_time(engine: Engine) -> None:
    """SQLite lets one transaction write at a time; the others retry on its busy handler, which sleeps
    longer and longer between tries, so under a few dozen concurrent writers a short commit waits far
    longer than it takes. Within the process, writers queue on a lock instead (from their first write to
    their commit or rollback) and each starts the moment the one before ends; readers never wait."""
    lock = threading.Lock()

    @event.listens_for(engine, "before_cursor_execute")
    def _write(conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if not conn.info.get("writing") and not statement.lstrip()[:6].upper().startswith(("SELECT", "PRAGMA")):
            # Bounded like the busy timeout: a thread that nests a second writing session in its first
            # one gets SQLite's own "database is locked" after it, as without the lock, not a hang.
            conn.info["writing"] = lock.acquire(timeout=30)

    def _done(info: dict[str, Any]) -> None:
        if info.pop("writing", False):
            lock.release()

    event.listen(engine, "commit", lambda conn: _done(conn.info))
    event.listen(engine, "rollback", lambda conn: _done(conn.info))
    event.listen(engine, "checkin", lambda _dbapi, record: _done(record.info))  # a connection given back


class Database:
    """One engine and its session factory; held by the app, handed to services."""

    def __init__(self, url: str, pool_size: int = 10, max_overflow: int = 20) -> None:
        self.url = url
        sqlite = make_url(url).get_backend_name() == "sqlite"  # one file: no pool to size
        pooled: dict[str, Any] = {} if sqlite else {"pool_size": pool_size, "max_overflow": max_overflow}
        self.engine = make_engine(url, **pooled)
        self._factory = sessionmaker(self.engine, expire_on_commit=False)

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self._factory() as s:
            try:
                yield s
                s.commit()
            except BaseException:
                s.rollback()
                raise

    def dispose(self) -> None:
        """Close the pooled connections. One still in use (a turn's save finishing as the server stops,
        a liveness lock that another start of the app still holds) goes back to the old pool later: it
        is closed then, not left for the collector to close (which psycopg reports as a leak)."""
        old = self.engine.pool
        self.engine.dispose()
        event.listen(old, "checkin", _close_on_return)


def _close_on_return(dbapi_connection: Any, _record: Any) -> None:
    if dbapi_connection is not None:  # (None: invalidated, closed already)
        dbapi_connection.close()
