"""Scope conversations to an app (kh, tablizer, trialscout); existing rows become 'kh'.

Revision ID: 0002_conversation_app
Revises: 0001_initial
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import add_columns, create_indexes, drop_columns, drop_indexes

revision = "0002_conversation_app"
down_revision = "0001_initial"
branch_labels = None
depends_on = None


def upgrade() -> None:
    add_columns("conversations", sa.Column("app", sa.String(50), nullable=False, server_default="kh"))
    create_indexes("conversations", "app")
    op.create_index("ix_conversations_user_app", "conversations", ["user_id", "app"])


def downgrade() -> None:
    op.drop_index("ix_conversations_user_app", table_name="conversations")
    drop_indexes("conversations", "app")
    drop_columns("conversations", "app")
