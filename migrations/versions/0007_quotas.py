"""Per-user quotas: rate-limit counters and daily token usage, shared by every worker.

Revision ID: 0007_quotas
Revises: 0006_ai_column_results_per_user
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_quotas"
down_revision = "0006_ai_column_results_per_user"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rate_limit_counters",
        sa.Column("key", sa.String(255), nullable=False),
        sa.Column("count", sa.Integer, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
        sa.PrimaryKeyConstraint("key", name="pk_rate_limit_counters"),
    )
    op.create_table(
        "daily_usage",
        sa.Column("user_id", sa.Integer, nullable=False),
        sa.Column("day", sa.Date, nullable=False),
        sa.Column("turns", sa.Integer, nullable=False),
        sa.Column("input_tokens", sa.BigInteger, nullable=False),
        sa.Column("output_tokens", sa.BigInteger, nullable=False),
        sa.Column("cache_creation_input_tokens", sa.BigInteger, nullable=False),
        sa.Column("cache_read_input_tokens", sa.BigInteger, nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name="fk_daily_usage_user_id_users", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id", "day", name="pk_daily_usage"),
    )


def downgrade() -> None:
    op.drop_table("daily_usage")
    op.drop_table("rate_limit_counters")
