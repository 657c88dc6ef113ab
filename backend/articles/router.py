"""Tablizer's own search over PubMed (live or the offline corpus)."""

from __future__ import annotations

from fastapi import APIRouter

from backend.auth.deps import CurrentUser
from backend.deps import SourcesDep
from backend.errors import error_responses, invalid_input
from backend.routing import OneHopRoute
from backend.sources.models import Article, ArticleSearchPage, ArticleSearchParams, checked_pmid

# 502/503: the live PubMed answered badly or not at all (never with the offline corpus).
router = APIRouter(prefix="/api/articles", tags=["articles"], responses=error_responses(401, 422, 502, 503),
                   route_class=OneHopRoute)


@router.get("/search")
async def search(sources: SourcesDep, user: CurrentUser, q: str = "", date_start: str | None = None,
                 date_end: str | None = None, sort: str = "relevance", page: int = 1,
                 page_size: int = 20) -> ArticleSearchPage:
    with invalid_input(prefix=("query",)):
        params = ArticleSearchParams(query=q, date_start=date_start or None, date_end=date_end or None,
                                     sort=sort, page=page, page_size=page_size)
    return await sources.pubmed.search_articles(params)


@router.get("/{pmid}", responses=error_responses(404))
async def get_article(pmid: str, sources: SourcesDep, user: CurrentUser) -> Article:
    return await sources.pubmed.get_article(checked_pmid(pmid))
