"""Worker liveness and continuation: a running turn names the worker process that runs it
(`backend/chat/workers.py`) and keeps its raw state, so a live worker can go on with it (`continued` times).

Revision ID: 0009_turn_workers
Revises: 0008_chat_turns
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa

from migrations.columns import add_columns, drop_columns, optional

revision = "0009_turn_workers"
down_revision = "0008_chat_turns"
branch_labels = None
depends_on = None


def upgrade() -> None:
    add_columns("chat_turns", *optional(worker_id=sa.String(32), resume_state=sa.JSON),
                sa.Column("continued", sa.Integer, nullable=False, server_default="0"))


def downgrade() -> None:
    drop_columns("chat_turns", "continued", "resume_state", "worker_id")
