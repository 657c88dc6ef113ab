"""One entry point for statistics, whichever sources the app runs on.

Offline figures come from the index (in its own threads: the queries are synchronous SQLite);
live ones from the APIs' own clients, so they share those clients' rate limiters.
"""

from __future__ import annotations

from backend.sources import Sources
from backend.sources.clinical_trials import ClinicalTrialsService
from backend.sources.offline.index import aget_index, off_loop
from backend.sources.pubmed import PubMedService
from backend.stats import live, offline
from backend.stats.models import ArticleStatsRequest, StatsResponse, TrialStatsRequest


async def trial_stats(sources: Sources, request: TrialStatsRequest) -> StatsResponse:
    if isinstance(sources.trials, ClinicalTrialsService):
        return await live.trial_stats(sources.trials, request)
    index = await aget_index()
    return await off_loop(offline.trial_stats, index, request)


async def article_stats(sources: Sources, request: ArticleStatsRequest) -> StatsResponse:
    if isinstance(sources.pubmed, PubMedService):
        return await live.article_stats(sources.pubmed, request)
    index = await aget_index()
    return await off_loop(offline.article_stats, index, request)
