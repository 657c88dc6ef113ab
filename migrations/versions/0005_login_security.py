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

revision = "0005_login_security"
down_revision = "0004_conversation_active_turn"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "login_failures",
        sa.Column("key", sa.String(120), nullable=False),
        sa.Column("failures", sa.Integer, nullable=False),
        sa.Column("last_failure_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("blocked_until", sa.DateTime(timezone=True)),
        sa.PrimaryKeyConstraint("key", name="pk_login_failures"),
    )
    op.create_index("ix_login_failures_last_failure_at", "login_failures", ["last_failure_at"])
    op.execute(sa.text("DELETE FROM auth_sessions"))
    with op.batch_alter_table("auth_sessions") as batch:
        batch.alter_column("token", new_column_name="token_hash", existing_type=sa.String(64),
                           existing_nullable=False)


def downgrade() -> None:
    op.execute(sa.text("DELETE FROM auth_sessions"))
    with op.batch_alter_table("auth_sessions") as batch:
        batch.alter_column("token_hash", new_column_name="token", existing_type=sa.String(64),
                           existing_nullable=False)
    op.drop_index("ix_login_failures_last_failure_at", table_name="login_failures")
    op.drop_table("login_failures")
