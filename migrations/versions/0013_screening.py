"""Screening: patients, their note versions, screenings with their events, trials and criterion results,
and the judgement cache.

Revision ID: 0013_screening
Revises: 0012_reports
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013_screening"
down_revision = "0012_reports"
branch_labels = None
depends_on = None


def _fk(table: str, column: str, target: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint([column], [f"{target}.id"], ondelete="CASCADE",
                                   name=f"fk_{table}_{column}_{target}")


def upgrade() -> None:
    op.create_table(
        "patients",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("user_id", sa.Integer, nullable=False),
        sa.Column("label", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("active_screening_id", sa.Integer, nullable=True),
        sa.Column("active_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_patients"),
        _fk("patients", "user_id", "users"),
    )
    op.create_index("ix_patients_user_id", "patients", ["user_id"])
    op.create_table(
        "patient_versions",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("patient_id", sa.Integer, nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("note", sa.Text, nullable=False),
        sa.Column("profile", sa.JSON, nullable=False),
        sa.Column("edited", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_patient_versions"),
        _fk("patient_versions", "patient_id", "patients"),
        sa.UniqueConstraint("patient_id", "number", name="uq_patient_versions_number"),
    )
    op.create_index("ix_patient_versions_patient_id", "patient_versions", ["patient_id"])
    op.create_table(
        "screenings",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("user_id", sa.Integer, nullable=False),
        sa.Column("patient_id", sa.Integer, nullable=False),
        sa.Column("version_id", sa.Integer, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("mode", sa.String(10), nullable=False),
        sa.Column("nct_ids", sa.JSON, nullable=False),
        sa.Column("max_candidates", sa.Integer, nullable=False),
        sa.Column("model", sa.String(100), nullable=False),
        sa.Column("last_event_id", sa.Integer, nullable=False),
        sa.Column("error", sa.JSON, nullable=True),
        sa.Column("input_tokens", sa.Integer, nullable=False),
        sa.Column("output_tokens", sa.Integer, nullable=False),
        sa.Column("cache_read_input_tokens", sa.Integer, nullable=False),
        sa.Column("cache_creation_input_tokens", sa.Integer, nullable=False),
        sa.Column("estimated_cost_usd", sa.Float, nullable=True),
        sa.Column("stop_requested", sa.Boolean, server_default=sa.false(), nullable=False),
        sa.Column("worker_id", sa.String(32), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_screenings"),
        _fk("screenings", "user_id", "users"),
        _fk("screenings", "patient_id", "patients"),
        _fk("screenings", "version_id", "patient_versions"),
    )
    for column in ("user_id", "patient_id", "version_id"):
        op.create_index(f"ix_screenings_{column}", "screenings", [column])
    op.create_table(
        "screening_events",
        sa.Column("screening_id", sa.Integer, nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("type", sa.String(32), nullable=False),
        sa.Column("data", sa.JSON, nullable=False),
        sa.PrimaryKeyConstraint("screening_id", "seq", name="pk_screening_events"),
        _fk("screening_events", "screening_id", "screenings"),
    )
    op.create_table(
        "screening_trials",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("screening_id", sa.Integer, nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("nct_id", sa.String(16), nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("verdict", sa.String(20), nullable=False),
        sa.Column("score", sa.Float, nullable=False),
        sa.Column("data", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_screening_trials"),
        _fk("screening_trials", "screening_id", "screenings"),
        sa.UniqueConstraint("screening_id", "nct_id", name="uq_screening_trials_nct"),
    )
    op.create_index("ix_screening_trials_screening_id", "screening_trials", ["screening_id"])
    op.create_table(
        "screening_criteria",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("trial_id", sa.Integer, nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("label", sa.String(10), nullable=False),
        sa.Column("data", sa.JSON, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_screening_criteria"),
        sa.ForeignKeyConstraint(["trial_id"], ["screening_trials.id"], ondelete="CASCADE",
                                name="fk_screening_criteria_trial_id_screening_trials"),
    )
    op.create_index("ix_screening_criteria_trial_id", "screening_criteria", ["trial_id"])
    op.create_table(
        "screening_judgements",
        sa.Column("id", sa.Integer, nullable=False),
        sa.Column("version_id", sa.Integer, nullable=False),
        sa.Column("nct_id", sa.String(16), nullable=False),
        sa.Column("criterion_hash", sa.String(100), nullable=False),
        sa.Column("model", sa.String(100), nullable=False),
        sa.Column("data", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_screening_judgements"),
        _fk("screening_judgements", "version_id", "patient_versions"),
        sa.UniqueConstraint("version_id", "nct_id", "criterion_hash", "model", name="uq_screening_judgements_key"),
    )


def downgrade() -> None:
    for table in ("screening_judgements", "screening_criteria", "screening_trials", "screening_events",
                  "screenings", "patient_versions", "patients"):
        op.drop_table(table)
