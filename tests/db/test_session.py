"""`Database`: what its disposal leaves behind, on both databases."""

from __future__ import annotations

import sqlite3

import pytest

from backend.db.session import Database


def test_a_connection_in_use_at_disposal_is_closed_when_it_comes_back(migrated_db_url: str) -> None:
    """A server stops while a thread still holds a connection (a turn's last save, another start's
    liveness lock). When the thread gives it back, it is closed: left in the old pool, it stayed open
    until the collector freed it, which psycopg reports as a ResourceWarning in whatever runs then."""
    db = Database(migrated_db_url)
    held = db.engine.connect()
    raw = held.connection.dbapi_connection
    db.dispose()
    held.close()
    if db.engine.dialect.name == "postgresql":
        assert raw is not None and raw.closed
    else:
        with pytest.raises(sqlite3.ProgrammingError, match="closed"):
            raw.cursor()  # type: ignore[union-attr]
    with db.engine.connect() as fresh:  # the engine goes on with a new pool
        assert fresh.exec_driver_sql("SELECT 1").scalar() == 1
    db.dispose()
