"""POST /api/stats/trials and /api/stats/articles: facet counts over a page's whole result set.

POST because a request carries a search and facet filters (nested, list-valued); it changes nothing.
Signed-in users only, like the searches themselves; a stats request names no stored resource.
"""

from __future__ import annotations

from fastapi import APIRouter

from backend.auth.deps import SearchingUser
from backend.deps import SourcesDep
from backend.errors import error_responses
from backend.routing import OneHopRoute
from backend.stats import service
from backend.stats.models import ArticleStatsRequest, StatsResponse, TrialStatsRequest

# 400: a body that is not JSON; 502/503: the live APIs answered badly or not at all.
router = APIRouter(prefix="/api/stats", tags=["stats"], responses=error_responses(400, 401, 422, 429, 502, 503),
                   route_class=OneHopRoute)


@router.post("/trials")
async def trial_stats(body: TrialStatsRequest, sources: SourcesDep, user: SearchingUser) -> StatsResponse:
    return await service.trial_stats(sources, body)


@router.post("/articles")
async def article_stats(body: ArticleStatsRequest, sources: SourcesDep, user: SearchingUser) -> StatsResponse:
    return await service.article_stats(sources, body)
