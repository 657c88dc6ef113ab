"""TrialScout's own search: the same filters, paging and errors as the chat's search_trials tool."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query

from backend.auth.deps import CurrentUser, SearchingUser
from backend.deps import SourcesDep
from backend.errors import error_responses, invalid_input
from backend.routing import OneHopRoute
from backend.sources.models import (
    NCT_ID_PATTERN,
    QUERY_RULES,
    OverallStatus,
    Phase,
    Sex,
    StudyType,
    TrialDetail,
    TrialSearchPage,
    TrialSearchParams,
    checked_nct_id,
)

# 502/503: the live ClinicalTrials.gov answered badly or not at all (never with the offline corpus).
router = APIRouter(prefix="/api/trials", tags=["trials"], responses=error_responses(401, 422, 502, 503),
                   route_class=OneHopRoute)


Text = Annotated[str | None, Query(max_length=500, description=QUERY_RULES)]


@router.get("/search", responses=error_responses(429))
async def search(
    sources: SourcesDep, user: SearchingUser,
    condition: Text = None, intervention: Text = None,
    sponsor: Annotated[str | None, Query(max_length=200, description=QUERY_RULES)] = None,
    eligibility_keywords: Text = None,
    phase: Annotated[list[Phase] | None, Query()] = None, status: Annotated[list[OverallStatus] | None, Query()] = None,
    location: Annotated[str | None, Query(max_length=200, description=QUERY_RULES)] = None,
    sex: Sex | None = None, study_type: StudyType | Literal["interventional", "observational"] | None = None,
    min_age: Annotated[int | None, Query(ge=0, le=120)] = None,
    max_age: Annotated[int | None, Query(ge=0, le=120)] = None,
    page_size: Annotated[int, Query(ge=1, le=100)] = 25,
    page_token: Annotated[str | None, Query(max_length=2000, description="next_page_token of the page before, as "
                                                                          "it was handed out")] = None,
) -> TrialSearchPage:
    raw: dict[str, Any] = {
        "condition": condition, "intervention": intervention, "sponsor": sponsor,
        "eligibility_keywords": eligibility_keywords, "phase": phase or [], "status": status or [],
        "location": location, "sex": sex or None, "study_type": study_type, "min_age": min_age, "max_age": max_age,
        "page_size": page_size, "page_token": page_token}
    with invalid_input(prefix=("query",)):
        params = TrialSearchParams(**{k: v for k, v in raw.items() if v not in (None, "")})
    return await sources.trials.search_trials(params)


@router.get("/{nct_id}", responses=error_responses(404))
async def get_trial(nct_id: Annotated[str, Path(pattern=NCT_ID_PATTERN, description="An NCT id: NCT and up to 8 "
                                                 "digits, any case (nct1234 is NCT00001234)")],
                    sources: SourcesDep, user: CurrentUser) -> TrialDetail:
    return await sources.trials.get_trial_by_nct_id(checked_nct_id(nct_id))
