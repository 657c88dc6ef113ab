"""Payload types of screening in TrialScout: the cards the assistant's screening tools return (a
declaration module of `backend.registry.builtins`, kept beside the shapes it carries).

Each is returned by a tool (never written as a marker), so the server fills it from the user's own
stored patient and screening. The two suggestions are accepted through the screening API itself: the
frontend sends what the card carries, so Accept does exactly what a user could do by hand.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from backend.registry import payload_type
from backend.screening.assist_schemas import ScreeningReportRead
from backend.screening.models import PatientProfile, ScreenRequest

ProfileField = Literal["age", "sex", "conditions", "keywords", "summary", "stage", "biomarkers",
                       "prior_therapies", "current_therapies", "comorbidities", "performance_status", "labs",
                       "location"]


class ProfileChange(BaseModel):
    field: ProfileField
    before: str
    after: str


@payload_type("patient_profile_edit", "A proposed edit of the patient's profile (Accept saves it as a new version)",
              suggestion=True)
class ProfileEditProposal(BaseModel):
    """Accept: `PATCH /api/patients/{patient_id}` with `{"profile": profile}`."""

    patient_id: int
    version_id: int = Field(description="The version the edit was made from")
    profile: PatientProfile = Field(description="The whole profile after the edit")
    changes: list[ProfileChange]
    explanation: str


class ProposedTrial(BaseModel):
    nct_id: str
    title: str = ""
    status: str | None = None


@payload_type("screening_proposal", "A proposed screening of the patient (Accept starts it)", suggestion=True)
class ScreeningProposal(BaseModel):
    """Accept: `POST /api/patients/{patient_id}/screenings` with `request` as its body."""

    patient_id: int
    request: ScreenRequest
    trials: list[ProposedTrial] = Field(default_factory=list, description="The trials `request.nct_ids` names")
    explanation: str


@payload_type("screening_report", "The patient's screening report, built: links to its HTML and PDF")
class ScreeningReportCard(BaseModel):
    report: ScreeningReportRead
    explanation: str = ""
