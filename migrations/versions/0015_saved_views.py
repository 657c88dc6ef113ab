"""Saved views: each user's working state per page, and the views they saved by name.

Revision ID: 0015_saved_views
Revises: 0014_model_usage
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import foreign_key, required, timestamps

revision = "0015_saved_views"
down_revision = "0014_model_usage"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "saved_views",
        sa.Column("id", sa.Integer, primary_key=True),
        *required(user_id=sa.Integer, app=sa.String(20), name=sa.String(120), state=sa.JSON),
        *timestamps("created_at", "updated_at"),
        foreign_key("saved_views", "user_id", "users"),
        sa.UniqueConstraint("user_id", "app", "name", name="uq_saved_views_user_app_name"),
    )


def downgrade() -> None:
    op.drop_table("saved_views")
