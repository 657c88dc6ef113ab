"""The next free request slot of each rate-limited upstream API (CT.gov, NCBI), shared by every instance
on one PostgreSQL (`backend/sources/shared_limit.py`).

Revision ID: 0017_upstream_limits
Revises: 0014_model_usage
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import primary_key, required

revision = "0017_upstream_limits"
down_revision = "0016_screening_reports"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "upstream_limits",
        *required(name=sa.String(64), next_slot=sa.Float),
        primary_key("upstream_limits", "name"),
    )


def downgrade() -> None:
    op.drop_table("upstream_limits")
