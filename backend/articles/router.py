"""Tablizer's own search over PubMed (live or the offline corpus)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import ValidationError

from backend.auth.deps import CurrentUser
from backend.errors import InvalidInput
from backend.sources.models import Article, ArticleSearchPage, ArticleSearchParams, checked_pmid
from backend.trials.router import sources, validation_detail

router = APIRouter(prefix="/api/articles", tags=["articles"])


@router.get("/search")
async def search(request: Request, user: CurrentUser, q: str = "", date_start: str | None = None,
                 date_end: str | None = None, sort: str = "relevance", page: int = 1,
                 page_size: int = 20) -> ArticleSearchPage:
    try:
        params = ArticleSearchParams(query=q, date_start=date_start or None, date_end=date_end or None,
                                     sort=sort, page=page, page_size=page_size)
    except ValidationError as exc:
        raise InvalidInput(validation_detail(exc)) from None
    return await sources(request).pubmed.search_articles(params)


@router.get("/{pmid}")
async def get_article(pmid: str, request: Request, user: CurrentUser) -> Article:
    return await sources(request).pubmed.get_article(checked_pmid(pmid))
