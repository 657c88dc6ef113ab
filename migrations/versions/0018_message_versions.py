"""Earlier versions of a conversation's tail: regenerate and edit archive what they replace, and the tray
switches between versions (`backend/conversations/versions.py`).

Revision ID: 0018_message_versions
Revises: 0017_upstream_limits
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018_message_versions"
down_revision = "0017_upstream_limits"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "message_versions",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("conversation_id", sa.Integer, nullable=False),
        sa.Column("parent_id", sa.Integer),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("messages", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_message_versions"),
        sa.ForeignKeyConstraint(["conversation_id"], ["conversations.id"], ondelete="CASCADE",
                                name="fk_message_versions_conversation_id_conversations"),
        sa.ForeignKeyConstraint(["parent_id"], ["message_versions.id"], ondelete="CASCADE",
                                name="fk_message_versions_parent_id_message_versions"),
    )
    op.create_index("ix_message_versions_conversation_id", "message_versions", ["conversation_id"])
    op.create_index("ix_message_versions_parent_id", "message_versions", ["parent_id"])


def downgrade() -> None:
    op.drop_index("ix_message_versions_parent_id", table_name="message_versions")
    op.drop_index("ix_message_versions_conversation_id", table_name="message_versions")
    op.drop_table("message_versions")
