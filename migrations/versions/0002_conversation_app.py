"""Scope conversations to an app (kh, tablizer, trialscout); existing rows become 'kh'.

Revision ID: 0002_conversation_app
Revises: 0001_initial
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_conversation_app"
down_revision = "0001_initial"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("conversations") as batch:
        batch.add_column(sa.Column("app", sa.String(50), nullable=False, server_default="kh"))
    op.create_index("ix_conversations_app", "conversations", ["app"])
    op.create_index("ix_conversations_user_app", "conversations", ["user_id", "app"])


def downgrade() -> None:
    op.drop_index("ix_conversations_user_app", table_name="conversations")
    op.drop_index("ix_conversations_app", table_name="conversations")
    with op.batch_alter_table("conversations") as batch:
        batch.drop_column("app")
