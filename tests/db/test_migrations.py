"""Alembic: up, down and up again on SQLite and PostgreSQL, with rows surviving the app migration."""

from __future__ import annotations

import sqlalchemy as sa

from backend.db.migrate import downgrade, upgrade
from tests.db.helpers import upgraded_with_user


def indexes(engine: sa.Engine) -> dict[str, list[str]]:
    return {ix["name"]: ix["column_names"] for ix in sa.inspect(engine).get_indexes("conversations")}


def test_up_down_up_keeps_rows(empty_db: str) -> None:
    engine = upgraded_with_user(empty_db, "0001_initial", "old")
    with engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO conversations (id, user_id, title, created_at, updated_at) "
                             "VALUES (7, 1, 'before apps', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"))
        conn.execute(sa.text("INSERT INTO messages (conversation_id, role, content, status, created_at) "
                             "VALUES (7, 'user', 'hello', 'complete', CURRENT_TIMESTAMP)"))
    assert "app" not in {c["name"] for c in sa.inspect(engine).get_columns("conversations")}

    upgrade(empty_db)
    engine.dispose()
    assert indexes(engine)["ix_conversations_app"] == ["app"]
    assert indexes(engine)["ix_conversations_user_app"] == ["user_id", "app"]
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT app, title FROM conversations")).all() == [("kh", "before apps")]
        conn.execute(sa.text("SELECT 1"))

    downgrade(empty_db, "0001_initial")
    engine.dispose()
    assert "ix_conversations_app" not in indexes(engine)
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT id, title FROM conversations")).all() == [(7, "before apps")]
        assert conn.execute(sa.text("SELECT content FROM messages")).scalar() == "hello"

    upgrade(empty_db)
    downgrade(empty_db, "base")
    engine.dispose()
    assert set(sa.inspect(engine).get_table_names()) <= {"alembic_version"}
    upgrade(empty_db)
    engine.dispose()
    assert {"users", "conversations", "messages", "research_streams", "ai_column_results"} <= set(
        sa.inspect(engine).get_table_names())
    engine.dispose()


def test_models_match_the_migrations(empty_db: str) -> None:
    """The ORM metadata and the migrated schema agree (no migration forgotten)."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from backend.db.base import Base
    from backend.db.models import Conversation  # noqa: F401  (fills the metadata)

    upgrade(empty_db)
    engine = sa.create_engine(empty_db)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    engine.dispose()
    assert diff == []
