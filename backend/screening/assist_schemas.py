"""Wire shapes of screening beside the chat: what TrialScout's page context says about the patient and
the screening (`context.screening`), and the patient's report (the cards are `backend.payloads.screening`).

The page sends ids, the profile and the shortlist, never the note: the note stays on the server and the
tools read it (its sentences quoted as evidence) from the user's own stored screening by those ids.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from backend.screening.models import MAX_CANDIDATES, PatientProfile, TrialVerdict
from backend.screening.schemas import ScreeningStatus

NctId = str
MAX_TITLE_CHARS = 200


class ShortlistEntry(BaseModel):
    """One screened trial as the table shows it (its fit column)."""

    nct_id: NctId = Field(max_length=20)
    title: str = Field("", max_length=1000)
    verdict: TrialVerdict
    score: float
    met: int = Field(0, ge=0)
    not_met: int = Field(0, ge=0)
    unknown: int = Field(0, ge=0)


class ScreeningPageContext(BaseModel):
    """`context.screening` on TrialScout: the patient loaded in the panel and the screening shown in the
    table. The note is never sent (it is referenced by `patient_id`/`version_id` and read on the server)."""

    patient_id: int
    label: str = Field("", max_length=200)
    version_id: int | None = None
    profile: PatientProfile | None = None
    screening_id: int | None = Field(None, description="The screening whose verdicts the table shows")
    status: ScreeningStatus | None = None
    shortlist: list[ShortlistEntry] = Field(default_factory=list, max_length=MAX_CANDIDATES,
                                            description="Best first, as ranked")
    open_nct_id: NctId | None = Field(None, max_length=20, description="The trial whose criteria are open")


# ---- reports --------------------------------------------------------------------------------------

class ScreeningReportRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str | None = Field(None, max_length=MAX_TITLE_CHARS, description="Default: the patient's label")
    nct_ids: list[NctId] = Field(default_factory=list, max_length=MAX_CANDIDATES,
                                 description="The trials to report, in the screening's order; [] = all screened")


class ScreeningReportRead(BaseModel):
    id: int
    screening_id: int
    patient_id: int
    title: str
    trial_count: int
    html_url: str
    pdf_url: str
    created_at: datetime
