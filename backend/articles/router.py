"""Tablizer's own search over PubMed (live or the offline corpus)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query

from backend.auth.deps import CurrentUser, SearchingUser
from backend.deps import SourcesDep
from backend.errors import error_responses, invalid_input
from backend.routing import OneHopRoute
from backend.sources.models import PMID, QUERY_RULES, Article, ArticleSearchPage, ArticleSearchParams, checked_pmid

# 502/503: the live PubMed answered badly or not at all (never with the offline corpus).
router = APIRouter(prefix="/api/articles", tags=["articles"], responses=error_responses(401, 422, 502, 503),
                   route_class=OneHopRoute)


DATE = Query(pattern=r"^\d{4}-\d{2}-\d{2}$", json_schema_extra={"format": "date"},
             description="YYYY-MM-DD; date_start not after date_end")


@router.get("/search", responses=error_responses(429))
async def search(sources: SourcesDep, user: SearchingUser,
                 q: Annotated[str, Query(min_length=1, max_length=2000, description=QUERY_RULES)],
                 date_start: Annotated[str | None, DATE] = None, date_end: Annotated[str | None, DATE] = None,
                 sort: Literal["relevance", "date"] = "relevance",
                 page: Annotated[int, Query(ge=1, le=100, description="PubMed pages through 10,000 results")] = 1,
                 page_size: Annotated[int, Query(ge=1, le=100)] = 20) -> ArticleSearchPage:
    with invalid_input(prefix=("query",)):
        params = ArticleSearchParams(query=q, date_start=date_start, date_end=date_end, sort=sort, page=page,
                                     page_size=page_size)
    return await sources.pubmed.search_articles(params)


@router.get("/{pmid}", responses=error_responses(404))
async def get_article(pmid: Annotated[str, Path(pattern=PMID.pattern, description="A PubMed id: digits")],
                      sources: SourcesDep, user: CurrentUser) -> Article:
    return await sources.pubmed.get_article(checked_pmid(pmid))
