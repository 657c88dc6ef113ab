"""Durable turns: one row per send (idempotency key, status) and the turn's event log for resume.

Revision ID: 0008_chat_turns
Revises: 0007_quotas
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_chat_turns"
down_revision = "0007_quotas"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "chat_turns",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("conversation_id", sa.Integer, nullable=False),
        sa.Column("user_id", sa.Integer, nullable=False),
        sa.Column("idempotency_key", sa.String(100)),
        sa.Column("request_hash", sa.String(64), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("user_message_id", sa.Integer),
        sa.Column("assistant_message_id", sa.Integer),
        sa.Column("last_event_id", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_chat_turns"),
        sa.ForeignKeyConstraint(["conversation_id"], ["conversations.id"], ondelete="CASCADE",
                                name="fk_chat_turns_conversation_id_conversations"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE", name="fk_chat_turns_user_id_users"),
        sa.UniqueConstraint("user_id", "idempotency_key", name="uq_chat_turns_user_key"),
    )
    op.create_index("ix_chat_turns_conversation_id", "chat_turns", ["conversation_id"])
    op.create_table(
        "turn_events",
        sa.Column("turn_id", sa.String(32), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("type", sa.String(32), nullable=False),
        sa.Column("data", sa.JSON, nullable=False),
        sa.PrimaryKeyConstraint("turn_id", "seq", name="pk_turn_events"),
        sa.ForeignKeyConstraint(["turn_id"], ["chat_turns.id"], ondelete="CASCADE",
                                name="fk_turn_events_turn_id_chat_turns"),
    )


def downgrade() -> None:
    op.drop_table("turn_events")
    op.drop_index("ix_chat_turns_conversation_id", table_name="chat_turns")
    op.drop_table("chat_turns")
