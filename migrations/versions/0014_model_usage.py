"""Tokens per user, UTC day and model, for the admin usage page (daily_usage has no model).

Days before this migration keep their totals: they are copied with the model "unrecorded".

Revision ID: 0014_model_usage
Revises: 0012_reports
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import foreign_key, primary_key, required

revision = "0014_model_usage"
down_revision = "0013_screening"
branch_labels = None
depends_on = None

TOKENS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def upgrade() -> None:
    op.create_table(
        "model_usage",
        *required(user_id=sa.Integer, day=sa.Date, model=sa.String(100), turns=sa.Integer),
        *required(**dict.fromkeys(TOKENS, sa.BigInteger)),
        foreign_key("model_usage", "user_id", "users"),
        primary_key("model_usage", "user_id", "day", "model"),
    )
    op.create_index("ix_model_usage_day", "model_usage", ["day"])
    columns = ", ".join(("user_id", "day", "turns", *TOKENS))
    op.execute(f"INSERT INTO model_usage (model, {columns}) SELECT 'unrecorded', {columns} FROM daily_usage")


def downgrade() -> None:
    op.drop_index("ix_model_usage_day", table_name="model_usage")
    op.drop_table("model_usage")
