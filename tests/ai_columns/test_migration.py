"""Migration 0003 (ai_column_results): up, down and up again on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from backend.db.migrate import downgrade, upgrade
from tests.db.helpers import upgraded_with_user

ROW = ("INSERT INTO ai_column_results (criteria_hash, column_type, app, item_id, model, value, reasoning, evidence, "
       "input_tokens, output_tokens, created_at) VALUES ('h', 'boolean', 'trialscout', 'NCT06382129', 'm', 'MET', "
       "'r', '[]', 1, 2, CURRENT_TIMESTAMP)")



def test_0003_up_down_up(empty_db: str) -> None:
    engine = upgraded_with_user(empty_db, "0002_conversation_app", "kept")
    assert "ai_column_results" not in sa.inspect(engine).get_table_names()

    upgrade(empty_db, "0003_ai_column_results")
    engine.dispose()
    unique = sa.inspect(engine).get_unique_constraints("ai_column_results")
    assert [(u["name"], u["column_names"]) for u in unique] == [
        ("uq_ai_column_results_key", ["criteria_hash", "column_type", "app", "model", "item_id"])]
    with engine.begin() as conn:
        conn.execute(sa.text(ROW))
    with pytest.raises(sa.exc.IntegrityError), engine.begin() as conn:
        conn.execute(sa.text(ROW))  # one cached answer per key

    downgrade(empty_db, "0002_conversation_app")
    engine.dispose()
    assert "ai_column_results" not in sa.inspect(engine).get_table_names()
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT username FROM users")).scalar() == "kept"

    upgrade(empty_db)
    engine.dispose()
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM ai_column_results")).scalar() == 0
    engine.dispose()


def test_0006_results_per_user_up_down_up(empty_db: str) -> None:
    upgrade(empty_db, "0004_conversation_active_turn")
    engine = sa.create_engine(empty_db)
    with engine.begin() as conn:
        for uid in (1, 2):
            conn.execute(sa.text("INSERT INTO users (id, username, password_hash, role, created_at) "
                                 f"VALUES ({uid}, 'u{uid}', 'x', 'user', CURRENT_TIMESTAMP)"))
        conn.execute(sa.text(ROW))  # shared by everyone: nobody's row, so it goes

    upgrade(empty_db, "0006_ai_column_results_per_user")
    engine.dispose()
    unique = sa.inspect(engine).get_unique_constraints("ai_column_results")
    assert [(u["name"], u["column_names"]) for u in unique] == [
        ("uq_ai_column_results_key", ["user_id", "criteria_hash", "column_type", "app", "model", "item_id"])]
    per_user = ROW.replace("(criteria_hash,", "(user_id, criteria_hash,").replace("VALUES (", "VALUES ({user}, ")
    with engine.begin() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM ai_column_results")).scalar() == 0
        conn.execute(sa.text(per_user.format(user=1)))
        conn.execute(sa.text(per_user.format(user=2)))  # the same evaluation, another user: its own row
    with pytest.raises(sa.exc.IntegrityError), engine.begin() as conn:
        conn.execute(sa.text(per_user.format(user=1)))

    downgrade(empty_db, "0004_conversation_active_turn")
    engine.dispose()
    assert "user_id" not in {c["name"] for c in sa.inspect(engine).get_columns("ai_column_results")}
    with engine.begin() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM ai_column_results")).scalar() == 0
        conn.execute(sa.text(ROW))
    upgrade(empty_db)
    engine.dispose()
