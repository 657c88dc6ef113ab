"""Offline sources: index build time and query latency. Not a test; run it by hand.

    .venv/bin/python -m benchmarks.sources_offline [--repeat 50]     (from the project root)
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable

from backend.sources.models import ArticleSearchParams, TrialSearchParams
from backend.sources.offline import OfflineClinicalTrialsService, OfflinePubMedService, build_index

QUERIES: list[tuple[str, Callable[[OfflineClinicalTrialsService, OfflinePubMedService], Awaitable[object]]]] = [
    ("trials: condition", lambda t, p: t.search_trials(TrialSearchParams(condition="non-small cell lung cancer"))),
    ("trials: filters only", lambda t, p: t.search_trials(
        TrialSearchParams(phase=["PHASE2", "PHASE3"], status=["RECRUITING"], sex="FEMALE", min_age=60, max_age=60))),
    ("trials: text + filters, 100/page", lambda t, p: t.search_trials(TrialSearchParams(
        condition="NSCLC OR lung cancer", intervention="pembrolizumab OR nivolumab OR PD-1", phase=["PHASE3"],
        page_size=100))),
    ("trials: get by id", lambda t, p: t.get_trial_by_nct_id("NCT06576635")),
    ("articles: PubMed query", lambda t, p: p.search_articles(ArticleSearchParams(
        query='(EGFR[MeSH] OR "epidermal growth factor receptor") AND (resistance OR resistant)'))),
    ("articles: broad, by date, 100/page", lambda t, p: p.search_articles(
        ArticleSearchParams(query="cancer OR carcinoma", sort="date", page_size=100))),
    ("articles: get by PMID", lambda t, p: p.get_article("22663011")),
]


async def main(repeat: int) -> None:
    started = time.perf_counter()
    index = build_index()
    print(f"index build: {time.perf_counter() - started:.3f} s "
          f"({len(index.trials)} trials, {len(index.articles)} articles)")
    trials, pubmed = OfflineClinicalTrialsService(index), OfflinePubMedService(index)
    for name, run in QUERIES:
        timings = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            await run(trials, pubmed)
            timings.append((time.perf_counter() - t0) * 1000)
        timings.sort()
        p95 = timings[min(len(timings) - 1, int(len(timings) * 0.95))]
        print(f"{name:38} median {statistics.median(timings):6.2f} ms   p95 {p95:6.2f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    asyncio.run(main(parser.parse_args().repeat))
