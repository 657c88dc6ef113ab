"""Data sources: ClinicalTrials.gov and PubMed behind one interface, with two backends.

    sources = get_sources(settings)            # offline (default) or live, from COLLEAGUE_SOURCES
    page = await sources.trials.search_trials(TrialSearchParams(condition="melanoma", phase=["PHASE3"]))
    trial = await sources.trials.get_trial_by_nct_id("NCT01245062")
    found = await sources.pubmed.search_articles(ArticleSearchParams(query="EGFR[MeSH] AND resist*"))

Services raise the app errors of `backend.errors`: `InvalidInput` (422: bad parameters, an
unparseable query, a query CT.gov rejected), `NotFound` (404: unknown NCT id or PMID),
`UpstreamError` (502) and `UpstreamUnavailable` (503: timeout, rate limited after retries).
Parameter models raise pydantic `ValidationError` at construction (also a 422).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from sqlalchemy.engine import make_url

from backend.config import Settings
from backend.db.session import Database
from backend.sources import clinical_trials, pubmed
from backend.sources.clinical_trials import ClinicalTrialsService
from backend.sources.models import (
    Article,
    ArticleSearchPage,
    ArticleSearchParams,
    ArticleSummary,
    TrialDetail,
    TrialSearchPage,
    TrialSearchParams,
    TrialSummary,
)
from backend.sources.offline import OfflineClinicalTrialsService, OfflinePubMedService
from backend.sources.pmc import FullText, FullTextMissing
from backend.sources.pubmed import PubMedService
from backend.sources.shared_limit import SharedRateLimiter
from backend.sources.throttle import RateLimiter

__all__ = [
    "Article", "ArticleSearchPage", "ArticleSearchParams", "ArticleSummary", "FullText", "FullTextMissing",
    "PubMedSource", "Sources",
    "TrialDetail", "TrialSearchPage", "TrialSearchParams", "TrialSummary", "TrialsSource", "close_sources",
    "describe", "get_sources",
]


@runtime_checkable
class TrialsSource(Protocol):
    async def search_trials(self, params: TrialSearchParams) -> TrialSearchPage: ...

    async def get_trial_by_nct_id(self, nct_id: str) -> TrialDetail: ...

    async def get_trials_by_nct_ids(self, nct_ids: Sequence[str]) -> list[TrialDetail]: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class PubMedSource(Protocol):
    async def search_articles(self, params: ArticleSearchParams) -> ArticleSearchPage: ...

    async def get_article(self, pmid: str) -> Article: ...

    async def get_articles(self, pmids: Sequence[str]) -> list[Article]: ...

    async def get_article_summaries(self, pmids: Sequence[str]) -> list[ArticleSummary]: ...

    async def get_full_text(self, pmid: str) -> FullText | FullTextMissing: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class Sources:
    mode: Literal["offline", "live"]
    trials: TrialsSource
    pubmed: PubMedSource
    ncbi_api_key: bool = False

    def describe(self) -> dict[str, Any]:
        return _describe(self.mode, self.ncbi_api_key)

    async def aclose(self) -> None:
        await self.trials.aclose()
        await self.pubmed.aclose()


def _describe(mode: str, has_key: bool) -> dict[str, Any]:
    if mode == "offline":
        return {"mode": "offline", "trials": "embedded ClinicalTrials.gov v2 corpus",
                "pubmed": "embedded PubMed corpus"}
    return {"mode": "live", "trials": clinical_trials.BASE_URL, "pubmed": pubmed.BASE_URL,
            "ncbi_api_key": has_key, "pubmed_requests_per_second": 10 if has_key else 3}


_cache: dict[tuple[str, str | None, str | None], Sources] = {}
_cache_lock = threading.Lock()


def get_sources(settings: Settings, db: Database | None = None) -> Sources:
    """The process's sources for these settings; one instance per mode, so live HTTP clients are reused.
    Live ones on PostgreSQL (`db`) keep the upstream rate limits across every instance (`shared_limit.py`)."""
    shared = db if db is not None and make_url(db.url).get_backend_name() == "postgresql" else None
    key = (settings.colleague_sources, settings.ncbi_api_key, shared.url if shared else None)
    with _cache_lock:
        if key not in _cache:
            if settings.colleague_sources == "live":
                api_key = settings.ncbi_api_key
                trials, articles = _limiters(shared, bool(api_key))
                _cache[key] = Sources("live", ClinicalTrialsService(limiter=trials),
                                      PubMedService(api_key=api_key, limiter=articles), bool(api_key))
            else:
                _cache[key] = Sources("offline", OfflineClinicalTrialsService(), OfflinePubMedService())
        return _cache[key]


def _limiters(db: Database | None, ncbi_key: bool) -> tuple[RateLimiter | None, RateLimiter | None]:
    """The shared limiters of CT.gov and NCBI on PostgreSQL; None: the process's own (the services' default)."""
    if db is None:
        return None, None
    ncbi = pubmed.shared_limiters[ncbi_key].min_interval
    return (SharedRateLimiter(db, "clinicaltrials.gov", clinical_trials.MIN_INTERVAL),
            SharedRateLimiter(db, "ncbi-api-key" if ncbi_key else "ncbi", ncbi))


async def close_sources() -> None:
    """Close live HTTP clients (app shutdown); the next `get_sources` builds fresh ones."""
    with _cache_lock:
        sources = list(_cache.values())
        _cache.clear()
    for item in sources:
        await item.aclose()
