"""Screening reports: a screening's report for the doctor and the patient, HTML and PDF as built; they
quote the note, so they go with their screening and their patient.

Revision ID: 0016_screening_reports
Revises: 0014_model_usage
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import create_indexes, drop_indexes, foreign_key, primary_key, required, timestamps

revision = "0016_screening_reports"
down_revision = "0015_saved_views"
branch_labels = None
depends_on = None


OWNERS = {"user_id": "users", "patient_id": "patients", "screening_id": "screenings"}


def upgrade() -> None:
    op.create_table(
        "screening_reports",
        *required(id=sa.Integer, **dict.fromkeys(OWNERS, sa.Integer), title=sa.String(255), trial_count=sa.Integer,
                  html=sa.Text, pdf=sa.LargeBinary),
        *timestamps("created_at"),
        primary_key("screening_reports"),
        *(foreign_key("screening_reports", column, target) for column, target in OWNERS.items()),
    )
    create_indexes("screening_reports", *OWNERS)


def downgrade() -> None:
    drop_indexes("screening_reports", *OWNERS)
    op.drop_table("screening_reports")
