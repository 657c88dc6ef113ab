"""Pool sizes are settings (the README's connection arithmetic for N instances rests on them)."""

from __future__ import annotations

import pytest
from sqlalchemy.pool import QueuePool

from backend.main import create_app
from tests.conftest import make_settings


def test_the_pool_is_as_large_as_the_settings_say(db_url: str) -> None:
    if not db_url.startswith("postgresql"):
        pytest.skip("SQLite is one file: its pool is not sized")
    app = create_app(make_settings(db_url, COLLEAGUE_DB_POOL_SIZE=3, COLLEAGUE_DB_MAX_OVERFLOW=2))
    try:
        pool = app.state.db.engine.pool
        assert isinstance(pool, QueuePool) and pool.size() == 3 and pool._max_overflow == 2
    finally:
        app.state.db.dispose()
