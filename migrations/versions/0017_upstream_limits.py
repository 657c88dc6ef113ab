"""The next free request slot of each rate-limited upstream API (CT.gov, NCBI), shared by every instance
on one PostgreSQL (`backend/sources/shared_limit.py`).

Revision ID: 0017_upstream_limits
Revises: 0014_model_usage
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017_upstream_limits"
down_revision = "0016_screening_reports"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "upstream_limits",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("next_slot", sa.Float, nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_upstream_limits"),
    )


def downgrade() -> None:
    op.drop_table("upstream_limits")
