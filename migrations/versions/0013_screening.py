"""Screening: patients, their note versions, screenings with their events, trials and criterion results,
and the judgement cache.

Revision ID: 0013_screening
Revises: 0012_reports
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from migrations.columns import (
    create_event_log,
    create_indexes,
    foreign_key,
    optional,
    primary_key,
    required,
    timestamps,
)

revision = "0013_screening"
down_revision = "0012_reports"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "patients",
        *required(id=sa.Integer, user_id=sa.Integer, label=sa.String(200)),
        *timestamps("created_at", "updated_at"),
        *optional(active_screening_id=sa.Integer),
        *timestamps("active_expires_at", nullable=True),
        primary_key("patients"),
        foreign_key("patients", "user_id", "users"),
    )
    create_indexes("patients", "user_id")
    op.create_table(
        "patient_versions",
        *required(id=sa.Integer, patient_id=sa.Integer, number=sa.Integer, note=sa.Text, profile=sa.JSON,
                  edited=sa.Boolean),
        *timestamps("created_at"),
        primary_key("patient_versions"),
        foreign_key("patient_versions", "patient_id", "patients"),
        sa.UniqueConstraint("patient_id", "number", name="uq_patient_versions_number"),
    )
    create_indexes("patient_versions", "patient_id")
    op.create_table(
        "screenings",
        *required(id=sa.Integer, user_id=sa.Integer, patient_id=sa.Integer, version_id=sa.Integer,
                  status=sa.String(20), mode=sa.String(10), nct_ids=sa.JSON, max_candidates=sa.Integer,
                  model=sa.String(100), last_event_id=sa.Integer),
        *optional(error=sa.JSON),
        *required(input_tokens=sa.Integer, output_tokens=sa.Integer, cache_read_input_tokens=sa.Integer,
                  cache_creation_input_tokens=sa.Integer),
        *optional(estimated_cost_usd=sa.Float),
        sa.Column("stop_requested", sa.Boolean, server_default=sa.false(), nullable=False),
        *optional(worker_id=sa.String(32)),
        *timestamps("created_at"),
        *timestamps("finished_at", nullable=True),
        primary_key("screenings"),
        foreign_key("screenings", "user_id", "users"),
        foreign_key("screenings", "patient_id", "patients"),
        foreign_key("screenings", "version_id", "patient_versions"),
    )
    create_indexes("screenings", "user_id", "patient_id", "version_id")
    create_event_log("screening_events", sa.Column("screening_id", sa.Integer, nullable=False), "screenings")
    op.create_table(
        "screening_trials",
        *required(id=sa.Integer, screening_id=sa.Integer, seq=sa.Integer, nct_id=sa.String(16), title=sa.Text,
                  verdict=sa.String(20), score=sa.Float, data=sa.JSON),
        *timestamps("created_at"),
        primary_key("screening_trials"),
        foreign_key("screening_trials", "screening_id", "screenings"),
        sa.UniqueConstraint("screening_id", "nct_id", name="uq_screening_trials_nct"),
    )
    create_indexes("screening_trials", "screening_id")
    op.create_table(
        "screening_criteria",
        *required(id=sa.Integer, trial_id=sa.Integer, position=sa.Integer, kind=sa.String(10), label=sa.String(10),
                  data=sa.JSON),
        primary_key("screening_criteria"),
        foreign_key("screening_criteria", "trial_id", "screening_trials"),
    )
    create_indexes("screening_criteria", "trial_id")
    op.create_table(
        "screening_judgements",
        *required(id=sa.Integer, version_id=sa.Integer, nct_id=sa.String(16), criterion_hash=sa.String(100),
                  model=sa.String(100), data=sa.JSON),
        *timestamps("created_at"),
        primary_key("screening_judgements"),
        foreign_key("screening_judgements", "version_id", "patient_versions"),
        sa.UniqueConstraint("version_id", "nct_id", "criterion_hash", "model", name="uq_screening_judgements_key"),
    )


def downgrade() -> None:
    for table in ("screening_judgements", "screening_criteria", "screening_trials", "screening_events",
                  "screenings", "patient_versions", "patients"):
        op.drop_table(table)
