"""Durable turns: one row per send (idempotency key, status) and the turn's event log for resume.

Revision ID: 0008_chat_turns
Revises: 0007_quotas
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import (
    create_event_log,
    create_indexes,
    drop_indexes,
    foreign_key,
    optional,
    primary_key,
    required,
    timestamps,
)

revision = "0008_chat_turns"
down_revision = "0007_quotas"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "chat_turns",
        *required(id=sa.String(32), conversation_id=sa.Integer, user_id=sa.Integer),
        *optional(idempotency_key=sa.String(100)),
        *required(request_hash=sa.String(64), status=sa.String(20)),
        *optional(user_message_id=sa.Integer, assistant_message_id=sa.Integer),
        *required(last_event_id=sa.Integer),
        *timestamps("created_at", "updated_at"),
        primary_key("chat_turns"),
        foreign_key("chat_turns", "conversation_id", "conversations"),
        foreign_key("chat_turns", "user_id", "users"),
        sa.UniqueConstraint("user_id", "idempotency_key", name="uq_chat_turns_user_key"),
    )
    create_indexes("chat_turns", "conversation_id")
    create_event_log("turn_events", sa.Column("turn_id", sa.String(32), nullable=False), "chat_turns")


def downgrade() -> None:
    op.drop_table("turn_events")
    drop_indexes("chat_turns", "conversation_id")
    op.drop_table("chat_turns")
