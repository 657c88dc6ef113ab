"""Which worker processes are alive, by something a dead process can't hold.

Each worker (one per process) has a random id and, while it runs, holds a lock that the operating system
or the database drops the moment the process dies — `kill -9` included:

- PostgreSQL: a session-level advisory lock `(NAMESPACE, id)` on a connection of its own; whether a
  worker lives is read from `pg_locks` (granted there only while that connection is open).
- SQLite: an exclusive `flock` on `<database>.workers/<id>.lock`; the kernel releases it with the
  process, and trying it (non-blocking, on a new open file) tells another process whether it's held.

A turn records the worker that runs it, so a conversation whose turn belongs to a provably dead worker
is freed at once instead of after its lease; a worker that can't be proved dead (no lock backend, an
unknown id, a lock still held) is treated as alive, and the lease stays the fallback.
"""

from __future__ import annotations

import fcntl
import logging
import os
import secrets
from collections.abc import Iterable
from pathlib import Path

from sqlalchemy import Connection, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from backend.db.session import Database

log = logging.getLogger(__name__)

NAMESPACE = 0x436F6C6C  # "Coll": the first key of every worker's advisory lock


class WorkerPresence:
    """This process's worker lock, and the liveness check of any worker's."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.id = str(secrets.randbelow(2**31 - 2) + 1)  # the advisory lock's second key (an int4)
        url = make_url(db.url)
        self.backend = url.get_backend_name()
        self.lock_dir: Path | None = None
        if self.backend == "sqlite" and url.database and url.database != ":memory:":
            self.lock_dir = Path(url.database).with_name(Path(url.database).name + ".workers")
        self._conn: Connection | None = None
        self._fd: int | None = None
        self._holders = 0  # lifespans holding it: one per process in production, more when tests share an app

    @property
    def held(self) -> bool:
        """Whether this worker holds its lock (only then do its turns name it)."""
        return self._conn is not None or self._fd is not None

    def hold(self) -> None:
        """Take this worker's lock at start-up (a second start of the same app shares it)."""
        self._holders += 1
        if not self.held:
            self._take()

    def _take(self) -> None:
        """Take the lock; never waits (the id is this process's own, so nobody else holds it)."""
        try:
            if self.backend == "postgresql":
                conn = self.db.engine.connect()
                taken = conn.execute(text("SELECT pg_try_advisory_lock(:ns, :id)"),
                                     {"ns": NAMESPACE, "id": int(self.id)}).scalar()
                conn.commit()
                if not taken:
                    conn.close()
                    raise RuntimeError(f"advisory lock of worker {self.id} is held by another session")
                self._conn = conn
            elif self.lock_dir is not None:
                self.lock_dir.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.lock_dir / f"{self.id}.lock", os.O_RDWR | os.O_CREAT, 0o600)
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._fd = fd
        except Exception:  # without a lock this worker's turns fall back to the lease
            log.exception("worker %s could not take its liveness lock", self.id)

    def keep(self) -> None:
        """Check the PostgreSQL lock's connection; take the lock again when the connection was lost."""
        if self._conn is None:
            return
        try:
            self._conn.execute(text("SELECT 1"))
            self._conn.commit()
        except Exception:
            log.warning("worker %s lost its liveness connection; taking the lock again", self.id)
            self._drop_connection()
            self._take()

    def release(self) -> None:
        self._holders = max(0, self._holders - 1)
        if self._holders:
            return  # another start of the same app still runs
        if self._conn is not None:
            try:
                self._conn.execute(text("SELECT pg_advisory_unlock_all()"))
                self._conn.commit()
            except Exception:
                log.debug("liveness unlock failed", exc_info=True)
            self._drop_connection()
        if self._fd is not None:
            os.close(self._fd)  # releases the flock
            self._fd = None
            if self.lock_dir is not None:
                (self.lock_dir / f"{self.id}.lock").unlink(missing_ok=True)

    def _drop_connection(self) -> None:
        assert self._conn is not None
        try:
            self._conn.invalidate()  # never back to the pool with a session lock on it
            self._conn.close()
        except Exception:
            log.debug("closing the liveness connection failed", exc_info=True)
        self._conn = None

    def holds(self, s: Session) -> bool:
        """Whether this worker still holds its lock (readiness): on PostgreSQL as the server sees it (a
        connection killed under it loses the lock). A database where no lock can be taken (SQLite in
        memory) has none to lose."""
        if self.backend == "postgresql":
            return self.held and not self.dead(s, [self.id])
        return self.held or self.lock_dir is None

    def dead(self, s: Session, worker_ids: Iterable[str | None]) -> set[str]:
        """The workers among `worker_ids` that are provably gone (their lock is free)."""
        ids = {w for w in worker_ids if w and w.isdigit()}
        if not ids:
            return set()
        if self.backend == "postgresql":
            alive = {str(row[0]) for row in s.execute(text(
                "SELECT objid::bigint FROM pg_locks WHERE locktype = 'advisory' AND granted "
                "AND classid::bigint = :ns AND objsubid = 2 "
                "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"),
                {"ns": NAMESPACE})}
            return ids - alive
        if self.lock_dir is None:
            return set()
        return {w for w in ids if w != self.id and not self._file_locked(w)}

    def _file_locked(self, worker_id: str) -> bool:
        path = self.lock_dir / f"{worker_id}.lock" if self.lock_dir else None
        if path is None:
            return True
        try:
            fd = os.open(path, os.O_RDWR)
        except FileNotFoundError:
            return False  # a worker makes its file before its first turn and removes it on exit
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return True
        path.unlink(missing_ok=True)  # the dead worker's file, removed under its own lock
        os.close(fd)
        return False
