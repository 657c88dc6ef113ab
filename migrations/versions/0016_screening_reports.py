"""Screening reports: a screening's report for the doctor and the patient, HTML and PDF as built; they
quote the note, so they go with their screening and their patient.

Revision ID: 0016_screening_reports
Revises: 0014_model_usage
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016_screening_reports"
down_revision = "0015_saved_views"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "screening_reports",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("user_id", sa.Integer, nullable=False),
        sa.Column("patient_id", sa.Integer, nullable=False),
        sa.Column("screening_id", sa.Integer, nullable=False),
        sa.Column("title", sa.String(255), nullable=False),
        sa.Column("trial_count", sa.Integer, nullable=False),
        sa.Column("html", sa.Text, nullable=False),
        sa.Column("pdf", sa.LargeBinary, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_screening_reports"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE",
                                name="fk_screening_reports_user_id_users"),
        sa.ForeignKeyConstraint(["patient_id"], ["patients.id"], ondelete="CASCADE",
                                name="fk_screening_reports_patient_id_patients"),
        sa.ForeignKeyConstraint(["screening_id"], ["screenings.id"], ondelete="CASCADE",
                                name="fk_screening_reports_screening_id_screenings"),
    )
    for column in ("user_id", "patient_id", "screening_id"):
        op.create_index(f"ix_screening_reports_{column}", "screening_reports", [column])


def downgrade() -> None:
    for column in ("user_id", "patient_id", "screening_id"):
        op.drop_index(f"ix_screening_reports_{column}", table_name="screening_reports")
    op.drop_table("screening_reports")
