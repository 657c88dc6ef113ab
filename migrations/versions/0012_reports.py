"""Reports: a shortlist's HTML and PDF renderings, kept per user.

Revision ID: 0012_reports
Revises: 0011_stream_versions
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import create_indexes, drop_indexes, foreign_key, primary_key, required, timestamps

revision = "0012_reports"
down_revision = "0011_stream_versions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "reports",
        *required(id=sa.Integer, user_id=sa.Integer, app=sa.String(20), title=sa.String(255), row_count=sa.Integer,
                  html=sa.Text, pdf=sa.LargeBinary),
        *timestamps("created_at"),
        primary_key("reports"),
        foreign_key("reports", "user_id", "users"),
    )
    create_indexes("reports", "user_id")


def downgrade() -> None:
    drop_indexes("reports", "user_id")
    op.drop_table("reports")
