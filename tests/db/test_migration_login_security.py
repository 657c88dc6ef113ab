"""Revision 0005: sessions stored before it are signed out (their plain tokens are not kept)."""

from __future__ import annotations

import sqlalchemy as sa

from backend.db.migrate import downgrade, upgrade
from tests.db.helpers import upgraded_with_user


def test_upgrade_signs_out_plain_token_sessions_and_downgrades(empty_db: str) -> None:
    engine = upgraded_with_user(empty_db, "0004_conversation_active_turn", "old")
    with engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO auth_sessions (token, user_id, created_at, expires_at) "
                             "VALUES ('plain-cookie-value', 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"))
    upgrade(empty_db)
    engine.dispose()
    inspector = sa.inspect(engine)
    assert "login_failures" in inspector.get_table_names()
    assert {c["name"] for c in inspector.get_columns("auth_sessions")} >= {"token_hash", "user_id"}
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT COUNT(*) FROM auth_sessions")).scalar() == 0
        assert conn.execute(sa.text("SELECT username FROM users")).scalar() == "old"

    downgrade(empty_db, "0004_conversation_active_turn")
    engine.dispose()
    inspector = sa.inspect(engine)
    assert "login_failures" not in inspector.get_table_names()
    assert "token" in {c["name"] for c in inspector.get_columns("auth_sessions")}
    upgrade(empty_db)
    engine.dispose()
