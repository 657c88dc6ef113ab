"""The schema as it was before conversations were scoped to apps.

Revision ID: 0001_initial
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import create_indexes, foreign_key, optional, primary_key, required, timestamps

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.Integer, primary_key=True),
        *required(username=sa.String(80), password_hash=sa.String(255), role=sa.String(20)),
        *timestamps("created_at"),
        primary_key("users"),
        sa.UniqueConstraint("username", name="uq_users_username"),
    )
    op.create_table(
        "auth_sessions",
        *required(token=sa.String(64), user_id=sa.Integer),
        *timestamps("created_at", "expires_at"),
        primary_key("auth_sessions", "token"),
        foreign_key("auth_sessions", "user_id", "users"),
    )
    create_indexes("auth_sessions", "user_id")
    op.create_table(
        "research_streams",
        *required(id=sa.Integer, name=sa.String(200)),
        *optional(description=sa.Text, chat_instructions=sa.Text, settings=sa.JSON),
        *required(archived=sa.Boolean),
        *optional(updated_by=sa.Integer),
        *timestamps("created_at", "updated_at"),
        primary_key("research_streams"),
        foreign_key("research_streams", "updated_by", "users", ondelete="SET NULL"),
    )
    op.create_table(
        "stream_instruction_versions",
        *required(id=sa.Integer, stream_id=sa.Integer),
        *optional(chat_instructions=sa.Text, note=sa.String(500), created_by=sa.Integer),
        *timestamps("created_at"),
        primary_key("stream_instruction_versions"),
        foreign_key("stream_instruction_versions", "stream_id", "research_streams"),
        foreign_key("stream_instruction_versions", "created_by", "users", ondelete="SET NULL"),
    )
    create_indexes("stream_instruction_versions", "stream_id")
    op.create_table(
        "conversations",
        *required(id=sa.Integer, user_id=sa.Integer),
        *optional(title=sa.String(255)),
        *timestamps("created_at", "updated_at"),
        primary_key("conversations"),
        foreign_key("conversations", "user_id", "users"),
    )
    create_indexes("conversations", "user_id")
    op.create_table(
        "messages",
        *required(id=sa.Integer, conversation_id=sa.Integer, role=sa.String(20), content=sa.Text),
        *optional(context=sa.JSON, extras=sa.JSON),
        *required(status=sa.String(20)),
        *timestamps("created_at"),
        primary_key("messages"),
        foreign_key("messages", "conversation_id", "conversations"),
    )
    create_indexes("messages", "conversation_id")


def downgrade() -> None:
    for table in ("messages", "conversations", "stream_instruction_versions", "research_streams", "auth_sessions",
                  "users"):
        op.drop_table(table)
