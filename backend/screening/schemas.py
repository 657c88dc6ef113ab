"""The screening API's wire shapes: patient requests and reads, screening reads, and the SSE events of a
screening (a union discriminated by `type`; only `chat/sse.py` turns them into frames).

The engine's own shapes (`backend.screening.models`: the profile, candidates, a screened trial) go on the
wire as they are; these wrap them with what the API adds (ids, status, tokens and cost).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from backend.agent.schemas import Reconnect, TurnError, Usage, WireEvent
from backend.screening.models import (
    MAX_NOTE_CHARS,
    Candidate,
    NoteSentence,
    PatientProfile,
    ScreenedTrial,
    ToolCallRecord,
    check_note,
)

MAX_LABEL_CHARS = 200
MAX_PROFILE_CHARS = 20_000  # as JSON: an edited profile is stored with every version
NOTE_DESCRIPTION = (f"The patient's note, free text (1 to {MAX_NOTE_CHARS:,} characters). Health data: kept for "
                    "its owner only, never logged or echoed in an error.")
ScreeningStatus = Literal["running", "complete", "failed", "stopped", "interrupted"]


def _label(value: str | None) -> str | None:
    return " ".join(value.split()) if value is not None else None


class PatientCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    note: str = Field(min_length=1, max_length=MAX_NOTE_CHARS, description=NOTE_DESCRIPTION)
    label: str | None = Field(None, max_length=MAX_LABEL_CHARS,
                              description="A name for the list; the profile's summary when left out")

    _note_ok = field_validator("note")(check_note)
    _label_ok = field_validator("label")(_label)


class PatientUpdate(BaseModel):
    """A new note and/or profile makes a new version (a new note without a profile is read again);
    a label alone does not."""

    model_config = ConfigDict(extra="forbid")

    note: str | None = Field(None, min_length=1, max_length=MAX_NOTE_CHARS, description=NOTE_DESCRIPTION)
    profile: PatientProfile | None = Field(None, description=f"At most {MAX_PROFILE_CHARS:,} characters as JSON")
    label: str | None = Field(None, max_length=MAX_LABEL_CHARS)

    @field_validator("note")
    @classmethod
    def _note_ok(cls, value: str | None) -> str | None:
        return check_note(value) if value is not None else None

    @field_validator("profile")
    @classmethod
    def _profile_ok(cls, value: PatientProfile | None) -> PatientProfile | None:
        if value is not None and len(value.model_dump_json()) > MAX_PROFILE_CHARS:
            raise ValueError(f"the profile is longer than {MAX_PROFILE_CHARS:,} characters as JSON")
        return value

    _label_ok = field_validator("label")(_label)


class PatientVersionRead(BaseModel):
    id: int
    number: int
    edited: bool  # False: the profile as it was extracted from the note
    created_at: datetime


class PatientRead(BaseModel):
    id: int
    label: str
    summary: str
    created_at: datetime
    updated_at: datetime
    version: PatientVersionRead  # the current one
    running_screening_id: int | None = None


class PatientDetail(PatientRead):
    note: str
    profile: PatientProfile
    versions: list[PatientVersionRead]  # every kept version, newest first


class ScreeningUsage(Usage):
    """A screening's tokens, counted as the Messages API counts them, its model and estimated cost."""

    model: str
    estimated_cost_usd: float | None = None


ScreeningError = TurnError  # {message, code, retryable}, as a chat turn's


class TrialProblem(BaseModel):
    """A trial that could not be screened (vanished from the source, its model call refused)."""

    nct_id: str | None
    code: str
    message: str
    retryable: bool = False


class ScreeningRead(BaseModel):
    id: int
    patient_id: int
    version_id: int
    status: ScreeningStatus
    mode: Literal["search", "nct_ids"]
    nct_ids: list[str]
    max_candidates: int
    trials_screened: int
    usage: ScreeningUsage
    error: ScreeningError | None = None
    created_at: datetime
    finished_at: datetime | None = None


class ScreeningDetail(ScreeningRead):
    """A screening as it stands: running ones too (`status: running`, trials so far)."""

    profile: PatientProfile | None = None
    sentences: list[NoteSentence] = Field(default_factory=list)
    candidates: list[Candidate] = Field(default_factory=list)
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    trials: list[ScreenedTrial] = Field(default_factory=list)  # best first once complete; else as they came
    problems: list[TrialProblem] = Field(default_factory=list)
    ranking: list[str] = Field(default_factory=list)
    last_event_id: int = 0


class StopAck(BaseModel):
    stopped: bool  # False: nothing was running


# ---- events ---------------------------------------------------------------------------------------

class ScreeningProfile(WireEvent):
    """Always first: the screening's id and the profile it screens with."""

    screening_id: int
    patient_id: int
    version_id: int
    profile: PatientProfile
    sentences: list[NoteSentence]
    extracted: bool
    type: Literal["profile"] = "profile"


class ScreeningCandidates(WireEvent):
    mode: Literal["search", "nct_ids"]
    candidates: list[Candidate]
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)  # asked-for NCT ids that no source has
    type: Literal["candidates"] = "candidates"


class TrialScreened(WireEvent):
    trial: ScreenedTrial
    done: int
    total: int
    type: Literal["trial"] = "trial"


class TrialFailed(TrialProblem, WireEvent):
    """One trial could not be screened; the screening goes on (stored as one of its `problems`)."""

    type: Literal["trial_error"] = "trial_error"


class ScreeningCompleted(WireEvent):
    """Last on success, and after Stop (`status: stopped`, the trials screened so far kept)."""

    screening_id: int
    status: Literal["complete", "stopped"]
    ranking: list[str]
    usage: ScreeningUsage
    type: Literal["complete"] = "complete"


class ScreeningFailed(ScreeningError, WireEvent):
    """Last on failure (the source is down, the model refused, the server stopped): the trials already
    screened stay stored. Its fields are the screening's stored `error`."""

    type: Literal["error"] = "error"


ScreeningStreamEvent = Annotated[
    ScreeningProfile | ScreeningCandidates | TrialScreened | TrialFailed | ScreeningCompleted | ScreeningFailed
    | Reconnect, Field(discriminator="type")]
