"""The schema as it was before conversations were scoped to apps.

Revision ID: 0001_initial
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None


def _ts(name: str) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=False)


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("username", sa.String(80), nullable=False),
        sa.Column("password_hash", sa.String(255), nullable=False),
        sa.Column("role", sa.String(20), nullable=False),
        _ts("created_at"),
        sa.PrimaryKeyConstraint("id", name="pk_users"),
        sa.UniqueConstraint("username", name="uq_users_username"),
    )
    op.create_table(
        "auth_sessions",
        sa.Column("token", sa.String(64), nullable=False),
        sa.Column("user_id", sa.Integer, nullable=False),
        _ts("created_at"),
        _ts("expires_at"),
        sa.PrimaryKeyConstraint("token", name="pk_auth_sessions"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE",
                                name="fk_auth_sessions_user_id_users"),
    )
    op.create_index("ix_auth_sessions_user_id", "auth_sessions", ["user_id"])
    op.create_table(
        "research_streams",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("description", sa.Text),
        sa.Column("chat_instructions", sa.Text),
        sa.Column("settings", sa.JSON),
        sa.Column("archived", sa.Boolean, nullable=False),
        sa.Column("updated_by", sa.Integer),
        _ts("created_at"),
        _ts("updated_at"),
        sa.PrimaryKeyConstraint("id", name="pk_research_streams"),
        sa.ForeignKeyConstraint(["updated_by"], ["users.id"], ondelete="SET NULL",
                                name="fk_research_streams_updated_by_users"),
    )
    op.create_table(
        "stream_instruction_versions",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("stream_id", sa.Integer, nullable=False),
        sa.Column("chat_instructions", sa.Text),
        sa.Column("note", sa.String(500)),
        sa.Column("created_by", sa.Integer),
        _ts("created_at"),
        sa.PrimaryKeyConstraint("id", name="pk_stream_instruction_versions"),
        sa.ForeignKeyConstraint(["stream_id"], ["research_streams.id"], ondelete="CASCADE",
                                name="fk_stream_instruction_versions_stream_id_research_streams"),
        sa.ForeignKeyConstraint(["created_by"], ["users.id"], ondelete="SET NULL",
                                name="fk_stream_instruction_versions_created_by_users"),
    )
    op.create_index("ix_stream_instruction_versions_stream_id", "stream_instruction_versions", ["stream_id"])
    op.create_table(
        "conversations",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("user_id", sa.Integer, nullable=False),
        sa.Column("title", sa.String(255)),
        _ts("created_at"),
        _ts("updated_at"),
        sa.PrimaryKeyConstraint("id", name="pk_conversations"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE",
                                name="fk_conversations_user_id_users"),
    )
    op.create_index("ix_conversations_user_id", "conversations", ["user_id"])
    op.create_table(
        "messages",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("conversation_id", sa.Integer, nullable=False),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("context", sa.JSON),
        sa.Column("extras", sa.JSON),
        sa.Column("status", sa.String(20), nullable=False),
        _ts("created_at"),
        sa.PrimaryKeyConstraint("id", name="pk_messages"),
        sa.ForeignKeyConstraint(["conversation_id"], ["conversations.id"], ondelete="CASCADE",
                                name="fk_messages_conversation_id_conversations"),
    )
    op.create_index("ix_messages_conversation_id", "messages", ["conversation_id"])


def downgrade() -> None:
    op.drop_table("messages")
    op.drop_table("conversations")
    op.drop_table("stream_instruction_versions")
    op.drop_table("research_streams")
    op.drop_table("auth_sessions")
    op.drop_table("users")
