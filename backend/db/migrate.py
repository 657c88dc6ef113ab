"""Run Alembic programmatically (the CLI's `migrate`, `serve` at start-up, and tests).

N instances started together against one database all run `upgrade`; one at a time, under a lock, so
the first migrates and the others find the schema at head and do nothing. PostgreSQL: a session-level
advisory lock on a connection of its own. SQLite: an `flock` on `<database>.migrate.lock` (one host).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, make_url, text
from sqlalchemy.pool import NullPool

from backend.config import PROJECT_ROOT

MIGRATION_LOCK = 0x636F6C6D  # the advisory lock's key ("colm")


def alembic_config(database_url: str) -> Config:
    cfg = Config(str(PROJECT_ROOT / "alembic.ini"))
    cfg.set_main_option("script_location", str(PROJECT_ROOT / "migrations"))
    cfg.attributes["database_url"] = database_url
    return cfg


@contextmanager
def one_migrator_at_a_time(database_url: str) -> Iterator[None]:
    url = make_url(database_url)
    if url.get_backend_name() == "postgresql":
        engine = create_engine(url, poolclass=NullPool)
        try:
            with engine.connect() as conn:
                conn.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK})
                conn.commit()
                try:
                    yield
                finally:
                    conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK})
                    conn.commit()
        finally:
            engine.dispose()
    elif url.database and url.database != ":memory:":
        lock = Path(url.database).with_name(Path(url.database).name + ".migrate.lock")
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # waits for the migrator before
            yield
        finally:
            os.close(fd)  # releases the lock
    else:
        yield


def upgrade(database_url: str, revision: str = "head") -> None:
    with one_migrator_at_a_time(database_url):
        command.upgrade(alembic_config(database_url), revision)


def downgrade(database_url: str, revision: str) -> None:
    with one_migrator_at_a_time(database_url):
        command.downgrade(alembic_config(database_url), revision)
