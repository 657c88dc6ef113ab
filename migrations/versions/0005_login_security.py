"""Sign-in hardening: failed-login counters shared by every worker, and session tokens stored hashed.

The `auth_sessions` rows held the cookie's token itself; from now on they hold its sha256. Existing
rows cannot be rehashed into anything a cookie would match without keeping the plain token, so they
are deleted: everyone signed in is signed out once and signs in again.

Revision ID: 0005_login_security
Revises: 0004_conversation_active_turn
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import create_indexes, drop_indexes, primary_key, required, timestamps

revision = "0005_login_security"
down_revision = "0004_conversation_active_turn"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "login_failures",
        *required(key=sa.String(120), failures=sa.Integer),
        *timestamps("last_failure_at"),
        *timestamps("blocked_until", nullable=True),
        primary_key("login_failures", "key"),
    )
    create_indexes("login_failures", "last_failure_at")
    op.execute(sa.text("DELETE FROM auth_sessions"))
    with op.batch_alter_table("auth_sessions") as batch:
        batch.alter_column("token", new_column_name="token_hash", existing_type=sa.String(64),
                           existing_nullable=False)


def downgrade() -> None:
    op.execute(sa.text("DELETE FROM auth_sessions"))
    with op.batch_alter_table("auth_sessions") as batch:
        batch.alter_column("token_hash", new_column_name="token", existing_type=sa.String(64),
                           existing_nullable=False)
    drop_indexes("login_failures", "last_failure_at")
    op.drop_table("login_failures")
