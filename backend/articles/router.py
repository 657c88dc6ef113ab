"""Tablizer's own search over PubMed (live or the offline corpus)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import ValidationError

from backend.deps import CurrentUser, SearchingUser, SourcesDep
from backend.errors import InvalidInput, error_responses
from backend.routing import OneHopRoute
from backend.sources.models import Article, ArticleSearchPage, ArticleSearchParams, checked_pmid

# 502/503: the live PubMed answered badly or not at all (never with the offline corpus).
router = APIRouter(prefix="/api/articles", tags=["articles"], responses=error_responses(401, 422, 502, 503),
                   route_class=OneHopRoute)


@router.get("/search", responses=error_responses(429))
async def search(sources: SourcesDep, user: SearchingUser, q: str = "", date_start: str | None = None,
                 date_end: str | None = None, sort: str = "relevance", page: int = 1,
                 page_size: int = 20) -> ArticleSearchPage:
    try:
        params = ArticleSearchParams(query=q, date_start=date_start or None, date_end=date_end or None,
                                     sort=sort, page=page, page_size=page_size)
    except ValidationError as exc:
        raise InvalidInput.from_errors(exc.errors(), prefix=("query",)) from None
    return await sources.pubmed.search_articles(params)


@router.get("/{pmid}", responses=error_responses(404))
async def get_article(pmid: str, sources: SourcesDep, user: CurrentUser) -> Article:
    return await sources.pubmed.get_article(checked_pmid(pmid))
