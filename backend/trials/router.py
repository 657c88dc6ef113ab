"""TrialScout's own search: the same filters, paging and errors as the chat's search_trials tool."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import ValidationError

from backend.deps import CurrentUser, SearchingUser, SourcesDep
from backend.errors import InvalidInput, error_responses
from backend.routing import OneHopRoute
from backend.sources.models import TrialDetail, TrialSearchPage, TrialSearchParams, checked_nct_id

# 502/503: the live ClinicalTrials.gov answered badly or not at all (never with the offline corpus).
router = APIRouter(prefix="/api/trials", tags=["trials"], responses=error_responses(401, 422, 502, 503),
                   route_class=OneHopRoute)


@router.get("/search", responses=error_responses(429))
async def search(
    sources: SourcesDep, user: SearchingUser,
    condition: str | None = None, intervention: str | None = None, sponsor: str | None = None,
    eligibility_keywords: str | None = None,
    phase: Annotated[list[str] | None, Query()] = None, status: Annotated[list[str] | None, Query()] = None,
    location: str | None = None, sex: str | None = None, study_type: str | None = None,
    min_age: int | None = None, max_age: int | None = None,
    page_size: int = 25, page_token: str | None = None,
) -> TrialSearchPage:
    raw: dict[str, Any] = {
        "condition": condition, "intervention": intervention, "sponsor": sponsor,
        "eligibility_keywords": eligibility_keywords, "phase": phase or [], "status": status or [],
        "location": location, "sex": sex or None, "study_type": study_type, "min_age": min_age, "max_age": max_age,
        "page_size": page_size, "page_token": page_token}
    try:
        params = TrialSearchParams(**{k: v for k, v in raw.items() if v not in (None, "")})
    except ValidationError as exc:
        raise InvalidInput.from_errors(exc.errors(), prefix=("query",)) from None
    return await sources.trials.search_trials(params)


@router.get("/{nct_id}", responses=error_responses(404))
async def get_trial(nct_id: str, sources: SourcesDep, user: CurrentUser) -> TrialDetail:
    return await sources.trials.get_trial_by_nct_id(checked_nct_id(nct_id))
