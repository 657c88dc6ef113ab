"""Per-conversation model settings: the model, the answer's max_tokens, history compaction on or off.

Revision ID: 0010_conversation_settings
Revises: 0009_turn_workers
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa

from migrations.columns import add_columns, drop_columns, optional

revision = "0010_conversation_settings"
down_revision = "0009_turn_workers"
branch_labels = None
depends_on = None


def upgrade() -> None:
    add_columns("conversations", *optional(model=sa.String(100), max_tokens=sa.Integer),
                sa.Column("compaction", sa.Boolean, nullable=False, server_default=sa.true()))


def downgrade() -> None:
    drop_columns("conversations", "compaction", "max_tokens", "model")
