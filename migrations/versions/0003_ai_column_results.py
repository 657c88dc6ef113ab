"""Cache AI column results in the database, so every worker process reuses them.

Revision ID: 0003_ai_column_results
Revises: 0002_conversation_app
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import optional, primary_key, required, timestamps

revision = "0003_ai_column_results"
down_revision = "0002_conversation_app"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ai_column_results",
        *required(id=sa.Integer, criteria_hash=sa.String(64), column_type=sa.String(16), app=sa.String(20),
                  item_id=sa.String(32), model=sa.String(100)),
        *optional(value=sa.Text),
        *required(reasoning=sa.Text, evidence=sa.JSON, input_tokens=sa.Integer, output_tokens=sa.Integer),
        *timestamps("created_at"),
        primary_key("ai_column_results"),
        sa.UniqueConstraint("criteria_hash", "column_type", "app", "model", "item_id",
                            name="uq_ai_column_results_key"),
    )


def downgrade() -> None:
    op.drop_table("ai_column_results")
