"""Worker liveness and continuation: a running turn names the worker process that runs it
(`backend/chat/workers.py`) and keeps its raw state, so a live worker can go on with it (`continued` times).

Revision ID: 0009_turn_workers
Revises: 0008_chat_turns
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_turn_workers"
down_revision = "0008_chat_turns"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("chat_turns") as batch:
        batch.add_column(sa.Column("worker_id", sa.String(32)))
        batch.add_column(sa.Column("resume_state", sa.JSON))
        batch.add_column(sa.Column("continued", sa.Integer, nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("chat_turns") as batch:
        batch.drop_column("continued")
        batch.drop_column("resume_state")
        batch.drop_column("worker_id")
