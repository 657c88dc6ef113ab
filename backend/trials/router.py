"""TrialScout's own search: the same filters, paging and errors as the chat's search_trials tool."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import ValidationError

from backend.auth.deps import CurrentUser
from backend.errors import InvalidInput
from backend.sources import Sources
from backend.sources.models import TrialDetail, TrialSearchPage, TrialSearchParams, checked_nct_id

router = APIRouter(prefix="/api/trials", tags=["trials"])


def validation_detail(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'query'}: {e['msg']}" for e in exc.errors())


def sources(request: Request) -> Sources:
    return request.app.state.sources


@router.get("/search")
async def search(
    request: Request, user: CurrentUser,
    condition: str | None = None, intervention: str | None = None, sponsor: str | None = None,
    eligibility_keywords: str | None = None,
    phase: Annotated[list[str] | None, Query()] = None, status: Annotated[list[str] | None, Query()] = None,
    location: str | None = None, sex: str | None = None, min_age: int | None = None, max_age: int | None = None,
    page_size: int = 25, page_token: str | None = None,
) -> TrialSearchPage:
    raw: dict[str, Any] = {
        "condition": condition, "intervention": intervention, "sponsor": sponsor,
        "eligibility_keywords": eligibility_keywords, "phase": phase or [], "status": status or [],
        "location": location, "sex": sex or None, "min_age": min_age, "max_age": max_age,
        "page_size": page_size, "page_token": page_token}
    try:
        params = TrialSearchParams(**{k: v for k, v in raw.items() if v not in (None, "")})
    except ValidationError as exc:
        raise InvalidInput(validation_detail(exc)) from None
    return await sources(request).trials.search_trials(params)


@router.get("/{nct_id}")
async def get_trial(nct_id: str, request: Request, user: CurrentUser) -> TrialDetail:
    return await sources(request).trials.get_trial_by_nct_id(checked_nct_id(nct_id))
