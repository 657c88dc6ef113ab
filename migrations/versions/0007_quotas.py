"""Per-user quotas: rate-limit counters and daily token usage, shared by every worker.

Revision ID: 0007_quotas
Revises: 0006_ai_column_results_per_user
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import foreign_key, primary_key, required

revision = "0007_quotas"
down_revision = "0006_ai_column_results_per_user"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "rate_limit_counters",
        *required(key=sa.String(255), count=sa.Integer, expires_at=sa.Float),
        primary_key("rate_limit_counters", "key"),
    )
    op.create_table(
        "daily_usage",
        *required(user_id=sa.Integer, day=sa.Date, turns=sa.Integer, input_tokens=sa.BigInteger,
                  output_tokens=sa.BigInteger, cache_creation_input_tokens=sa.BigInteger,
                  cache_read_input_tokens=sa.BigInteger),
        foreign_key("daily_usage", "user_id", "users"),
        primary_key("daily_usage", "user_id", "day"),
    )


def downgrade() -> None:
    op.drop_table("daily_usage")
    op.drop_table("rate_limit_counters")
