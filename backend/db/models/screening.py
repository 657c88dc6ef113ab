"""Patients and their screenings against trials (issue 25): health data, kept for their owner only.

    Patient            one per person screened, owned by a user; holds the lease of its running screening
     ├─ PatientVersion  the note and its profile, a new version per edit; kept while a screening uses it
     ├─ Screening       one run: its candidates, status, tokens and cost (the version it read)
     │   ├─ ScreeningEvent    its other streamed events (profile, candidates, notes, the end), by SSE id
     │   └─ ScreeningTrial     one trial's verdict and score, saved the moment it was judged (its event)
     │       └─ ScreeningCriterion   one criterion's label, reasoning and evidence sentences
     ├─ (per version) CachedJudgement   the judgement cache: one criterion of one trial, per model
     └─ (per screening) ScreeningReport  the report for the doctor and the patient, HTML and PDF as built

A screening's SSE stream is rebuilt from these rows with the ids it was sent with (`ScreeningEvent.seq`,
`ScreeningTrial.seq`), so a reload or another worker replays exactly what a reader missed.

Every child row goes with its patient (ON DELETE CASCADE, and the service deletes children-first too),
so deleting a patient leaves nothing derived from the note behind. The usage a screening added to the
user's `daily_usage` stays: deleting does not give tokens back.

A screening holds its patient with a lease like a chat turn holds its conversation (`chat/turns.py`):
one atomic UPDATE claims `patients.active_screening_id`, so two workers can't both screen one patient;
the running worker renews it, and a crashed worker's screening lapses instead of blocking the patient.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, Float, ForeignKey, Integer, LargeBinary, String, Text, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column

from backend.db.base import Base, UTCDateTime, utcnow
from backend.db.models.turns import EventRow


class Patient(Base):
    __tablename__ = "patients"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    label: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The screening running now (any worker) and its lease; no foreign key: it names a screening of this
    # patient only while it runs, and a lapsed lease frees the patient for the next one.
    active_screening_id: Mapped[int | None] = mapped_column(Integer, default=None)
    active_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)


class PatientVersion(Base):
    __tablename__ = "patient_versions"
    __table_args__ = (UniqueConstraint("patient_id", "number", name="uq_patient_versions_number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    patient_id: Mapped[int] = mapped_column(ForeignKey("patients.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)  # 1, 2, 3… within the patient
    note: Mapped[str] = mapped_column(Text)
    profile: Mapped[dict[str, Any]] = mapped_column(JSON)
    edited: Mapped[bool] = mapped_column(Boolean, default=False)  # False: the profile as INGEST extracted it
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Screening(Base):
    __tablename__ = "screenings"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    patient_id: Mapped[int] = mapped_column(ForeignKey("patients.id", ondelete="CASCADE"), index=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("patient_versions.id", ondelete="CASCADE"), index=True)
    status: Mapped[str] = mapped_column(String(20), default="running")  # running|complete|failed|stopped|interrupted
    mode: Mapped[str] = mapped_column(String(10))  # search | trials
    nct_ids: Mapped[list[str]] = mapped_column(JSON, default=list)  # "screen these trials": the ids asked for
    max_candidates: Mapped[int] = mapped_column(Integer, default=20)
    model: Mapped[str] = mapped_column(String(100))
    last_event_id: Mapped[int] = mapped_column(Integer, default=0)  # the SSE id of the last event saved
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)  # {message, code, retryable}
    input_tokens: Mapped[int] = mapped_column(Integer, default=0)
    output_tokens: Mapped[int] = mapped_column(Integer, default=0)
    cache_read_input_tokens: Mapped[int] = mapped_column(Integer, default=0)
    cache_creation_input_tokens: Mapped[int] = mapped_column(Integer, default=0)
    estimated_cost_usd: Mapped[float | None] = mapped_column(Float, default=None)
    stop_requested: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    worker_id: Mapped[str | None] = mapped_column(String(32), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)


class ScreeningEvent(EventRow, Base):
    __tablename__ = "screening_events"

    screening_id: Mapped[int] = mapped_column(ForeignKey("screenings.id", ondelete="CASCADE"), primary_key=True)


class ScreeningTrial(Base):
    __tablename__ = "screening_trials"
    __table_args__ = (UniqueConstraint("screening_id", "nct_id", name="uq_screening_trials_nct"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    screening_id: Mapped[int] = mapped_column(ForeignKey("screenings.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(Integer)  # its event's SSE id
    nct_id: Mapped[str] = mapped_column(String(16))
    title: Mapped[str] = mapped_column(Text, default="")
    verdict: Mapped[str] = mapped_column(String(20))  # ELIGIBLE|EXCLUDED|UNCERTAIN|NOT_RELEVANT
    score: Mapped[float] = mapped_column(Float, default=0.0)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)  # the rest of the engine's trial result
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ScreeningCriterion(Base):
    __tablename__ = "screening_criteria"

    id: Mapped[int] = mapped_column(primary_key=True)
    trial_id: Mapped[int] = mapped_column(ForeignKey("screening_trials.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)  # order within the trial's criteria
    kind: Mapped[str] = mapped_column(String(10))  # inclusion | exclusion
    label: Mapped[str] = mapped_column(String(10))  # MET | NOT_MET | UNKNOWN
    data: Mapped[dict[str, Any]] = mapped_column(JSON)  # the engine's result: text, reasoning, evidence…


class CachedJudgement(Base):
    """The judgement cache: one criterion of one trial judged against one note version by one model."""

    __tablename__ = "screening_judgements"
    __table_args__ = (UniqueConstraint("version_id", "nct_id", "criterion_hash", "model",
                                       name="uq_screening_judgements_key"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("patient_versions.id", ondelete="CASCADE"))
    nct_id: Mapped[str] = mapped_column(String(16))
    criterion_hash: Mapped[str] = mapped_column(String(100))
    model: Mapped[str] = mapped_column(String(100))
    data: Mapped[dict[str, Any]] = mapped_column(JSON)  # the engine's judgement, as it serialises it
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ScreeningReport(Base):
    """A screening's report as built (a record of the verdicts then, like `reports`); it quotes the note,
    so it goes with its screening and its patient."""

    __tablename__ = "screening_reports"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    patient_id: Mapped[int] = mapped_column(ForeignKey("patients.id", ondelete="CASCADE"), index=True)
    screening_id: Mapped[int] = mapped_column(ForeignKey("screenings.id", ondelete="CASCADE"), index=True)
    title: Mapped[str] = mapped_column(String(255))
    trial_count: Mapped[int] = mapped_column(Integer, default=0)
    html: Mapped[str] = mapped_column(Text)
    pdf: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
