"""Shared start of the migration tests: a database at an old revision, holding a row the migration must keep."""

from __future__ import annotations

import sqlalchemy as sa

from backend.db.migrate import upgrade


def upgraded_with_user(url: str, revision: str, username: str) -> sa.Engine:
    """`url` migrated up to `revision`, with user 1 named `username`."""
    upgrade(url, revision)
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO users (id, username, password_hash, role, created_at) "
                             "VALUES (1, :username, 'x', 'user', CURRENT_TIMESTAMP)"), {"username": username})
    return engine
