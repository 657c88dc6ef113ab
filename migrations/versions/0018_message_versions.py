"""Earlier versions of a conversation's tail: regenerate and edit archive what they replace, and the tray
switches between versions (`backend/conversations/versions.py`).

Revision ID: 0018_message_versions
Revises: 0017_upstream_limits
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import create_indexes, drop_indexes, foreign_key, optional, primary_key, required, timestamps

revision = "0018_message_versions"
down_revision = "0017_upstream_limits"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "message_versions",
        *required(id=sa.Integer, conversation_id=sa.Integer),
        *optional(parent_id=sa.Integer),
        *required(position=sa.Integer, version=sa.Integer, messages=sa.JSON),
        *timestamps("created_at"),
        primary_key("message_versions"),
        foreign_key("message_versions", "conversation_id", "conversations"),
        foreign_key("message_versions", "parent_id", "message_versions"),
    )
    create_indexes("message_versions", "conversation_id", "parent_id")


def downgrade() -> None:
    drop_indexes("message_versions", "parent_id", "conversation_id")
    op.drop_table("message_versions")
