"""Track the running turn of a conversation in the database, so Stop and "busy" work across workers.

Revision ID: 0004_conversation_active_turn
Revises: 0003_ai_column_results
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_conversation_active_turn"
down_revision = "0003_ai_column_results"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("conversations") as batch:
        batch.add_column(sa.Column("active_turn_id", sa.String(32)))
        batch.add_column(sa.Column("active_turn_expires_at", sa.DateTime(timezone=True)))
        batch.add_column(sa.Column("stop_requested", sa.Boolean, nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("conversations") as batch:
        batch.drop_column("stop_requested")
        batch.drop_column("active_turn_expires_at")
        batch.drop_column("active_turn_id")
