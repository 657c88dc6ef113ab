"""Wire shapes of a screening's reports for the doctor and the patient (the cards are
`backend.screening.cards`, TrialScout's `context.screening` is `backend.pages.screening_context`)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from backend.screening.models import MAX_CANDIDATES

NctId = str
MAX_TITLE_CHARS = 200


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
