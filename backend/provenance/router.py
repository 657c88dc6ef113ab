"""`GET /api/sources`: where the pages' data comes from, for the banner each results page shows (without it the
offline sample reads as the live registries, and a 2016 copy's "Recruiting" as today's)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel, Field

from backend.auth.deps import CurrentUser
from backend.deps import SourcesDep
from backend.errors import error_responses
from backend.routing import OneHopRoute
from backend.sources.offline.coverage import SampleCoverage, coverage
from backend.sources.offline.index import aget_index, off_loop

router = APIRouter(prefix="/api/sources", tags=["sources"], responses=error_responses(401),
                   route_class=OneHopRoute)


class SourcesRead(BaseModel):
    mode: Literal["offline", "live"]
    trials_source: str = Field(description="The registry TrialScout stands for, e.g. 'ClinicalTrials.gov'")
    articles_source: str
    trials: SampleCoverage | None = Field(None, description="Offline: the sample's trials and their dates; None live")
    articles: SampleCoverage | None = None


@router.get("")
async def sources(sources: SourcesDep, user: CurrentUser) -> SourcesRead:
    read = SourcesRead(mode=sources.mode, trials_source="ClinicalTrials.gov", articles_source="PubMed")
    if sources.mode == "offline":
        read.trials, read.articles = await off_loop(coverage, await aget_index())
    return read
