"""Saved views: each user's working state per page, and the views they saved by name.

Revision ID: 0015_saved_views
Revises: 0014_model_usage
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015_saved_views"
down_revision = "0014_model_usage"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "saved_views",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("user_id", sa.Integer, nullable=False),
        sa.Column("app", sa.String(20), nullable=False),
        sa.Column("name", sa.String(120), nullable=False),
        sa.Column("state", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_saved_views_user_id_users", ondelete="CASCADE"),
        sa.UniqueConstraint("user_id", "app", "name", name="uq_saved_views_user_app_name"),
    )


def downgrade() -> None:
    op.drop_table("saved_views")
