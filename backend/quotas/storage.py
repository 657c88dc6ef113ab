"""A `limits` storage over our own database, so every worker counts against the same windows.

`limits` documents custom storages as an extension point (subclass `limits.storage.Storage`, implement
its abstract methods). The fixed-window strategy needs only `incr`, which here is one atomic upsert:
the row is created, added to, or restarted when its window has passed, and the new count comes back
in the same statement (`INSERT … ON CONFLICT DO UPDATE … RETURNING`, on SQLite ≥ 3.35 and PostgreSQL).
Time is `time.time()`, as the library's strategies compare it; workers on several hosts need NTP, as
with any shared store.
"""

from __future__ import annotations

import time
from typing import Any

from limits.storage import Storage
from sqlalchemy import case, delete, select, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from backend.db.models import RateLimitCounter
from backend.db.session import Database


def upsert_for(s: Session) -> Any:
    return upsert_of(s.get_bind().dialect.name)


def upsert_of(dialect: str) -> Any:
    """The dialect's INSERT that has `on_conflict_do_update` (the only two databases we run on)."""
    return pg_insert if dialect == "postgresql" else sqlite_insert


class DatabaseStorage(Storage):
    STORAGE_SCHEME = None  # built with the app's Database, never from a URI

    def __init__(self, db: Database) -> None:
        super().__init__()
        self.db = db

    @property
    def base_exceptions(self) -> type[Exception]:
        return SQLAlchemyError

    def incr(self, key: str, expiry: float, amount: int = 1) -> int:
        now = time.time()
        table = RateLimitCounter.__table__
        expired = table.c.expires_at <= now
        with self.db.session() as s:
            stmt = upsert_for(s)(table).values(key=key, count=amount, expires_at=now + expiry)
            stmt = stmt.on_conflict_do_update(index_elements=[table.c.key], set_={
                "count": case((expired, amount), else_=table.c.count + amount),
                "expires_at": case((expired, now + expiry), else_=table.c.expires_at),
            }).returning(table.c.count)
            return int(s.execute(stmt).scalar_one())

    def get(self, key: str) -> int:
        with self.db.session() as s:
            count = s.scalar(select(RateLimitCounter.count)
                             .where(RateLimitCounter.key == key, RateLimitCounter.expires_at > time.time()))
        return count or 0

    def get_expiry(self, key: str) -> float:
        with self.db.session() as s:
            expires_at = s.scalar(select(RateLimitCounter.expires_at).where(RateLimitCounter.key == key))
        return expires_at if expires_at is not None else time.time()

    def check(self) -> bool:
        try:
            with self.db.session() as s:
                s.execute(text("SELECT 1"))
            return True
        except SQLAlchemyError:
            return False

    def reset(self) -> int | None:
        with self.db.session() as s:
            return int(s.execute(delete(RateLimitCounter)).rowcount)  # type: ignore[attr-defined]

    def clear(self, key: str) -> None:
        with self.db.session() as s:
            s.execute(delete(RateLimitCounter).where(RateLimitCounter.key == key))
