"""Track the running turn of a conversation in the database, so Stop and "busy" work across workers.

Revision ID: 0004_conversation_active_turn
Revises: 0003_ai_column_results
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa

from migrations.columns import add_columns, drop_columns, optional, timestamps

revision = "0004_conversation_active_turn"
down_revision = "0003_ai_column_results"
branch_labels = None
depends_on = None


def upgrade() -> None:
    add_columns("conversations", *optional(active_turn_id=sa.String(32)),
                *timestamps("active_turn_expires_at", nullable=True),
                sa.Column("stop_requested", sa.Boolean, nullable=False, server_default=sa.false()))


def downgrade() -> None:
    drop_columns("conversations", "stop_requested", "active_turn_expires_at", "active_turn_id")
