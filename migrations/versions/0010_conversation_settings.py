"""Per-conversation model settings: the model, the answer's max_tokens, history compaction on or off.

Revision ID: 0010_conversation_settings
Revises: 0009_turn_workers
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010_conversation_settings"
down_revision = "0009_turn_workers"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("conversations") as batch:
        batch.add_column(sa.Column("model", sa.String(100), nullable=True))
        batch.add_column(sa.Column("max_tokens", sa.Integer, nullable=True))
        batch.add_column(sa.Column("compaction", sa.Boolean, nullable=False, server_default=sa.true()))


def downgrade() -> None:
    with op.batch_alter_table("conversations") as batch:
        batch.drop_column("compaction")
        batch.drop_column("max_tokens")
        batch.drop_column("model")
