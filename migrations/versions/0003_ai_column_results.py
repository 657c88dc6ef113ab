"""Cache AI column results in the database, so every worker process reuses them.

Revision ID: 0003_ai_column_results
Revises: 0002_conversation_app
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_ai_column_results"
down_revision = "0002_conversation_app"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ai_column_results",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("criteria_hash", sa.String(64), nullable=False),
        sa.Column("column_type", sa.String(16), nullable=False),
        sa.Column("app", sa.String(20), nullable=False),
        sa.Column("item_id", sa.String(32), nullable=False),
        sa.Column("model", sa.String(100), nullable=False),
        sa.Column("value", sa.Text),
        sa.Column("reasoning", sa.Text, nullable=False),
        sa.Column("evidence", sa.JSON, nullable=False),
        sa.Column("input_tokens", sa.Integer, nullable=False),
        sa.Column("output_tokens", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_ai_column_results"),
        sa.UniqueConstraint("criteria_hash", "column_type", "app", "model", "item_id",
                            name="uq_ai_column_results_key"),
    )


def downgrade() -> None:
    op.drop_table("ai_column_results")
