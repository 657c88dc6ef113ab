"""Offline sources: index build time, search latency over the whole corpus, memory. Not a test.

    .venv/bin/python -m benchmarks.sources_offline [--repeat 20] [--keep-cache]     (from the project root)

The index is built from scratch in a child process (`python -m backend index`, into a temporary
cache directory), as `make run` does on a first start; this process then opens the cached file,
runs a mix of searches a user and the model make (PubMed syntax, Essie, filters, deep pages), and
reports p50/p99 per kind and overall, and its resident memory (VmRSS) with the index loaded.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from backend.sources.models import ArticleSearchParams, TrialSearchParams
from backend.sources.offline import OfflineClinicalTrialsService, OfflinePubMedService, open_index

Trials, PubMed = OfflineClinicalTrialsService, OfflinePubMedService
Run = Callable[[Trials, PubMed], Awaitable[object]]


def _trials(**kw: object) -> Run:
    return lambda t, p: t.search_trials(TrialSearchParams(**kw))  # type: ignore[arg-type]


def _articles(query: str, **kw: object) -> Run:
    return lambda t, p: p.search_articles(ArticleSearchParams(query=query, **kw))  # type: ignore[arg-type]


RECRUITING = ["RECRUITING", "ACTIVE_NOT_RECRUITING"]
QUERIES: list[tuple[str, str, Run]] = [
    ("trials", "melanoma, recruiting", _trials(condition="melanoma", status=["RECRUITING"])),
    ("trials", "breast cancer, phase 2", _trials(condition="breast cancer", phase=["PHASE2"], status=RECRUITING)),
    ("trials", "NSCLC phase 3 immunotherapy", _trials(condition="NSCLC OR non-small cell lung cancer",
                                                      intervention="immunotherapy OR pembrolizumab OR nivolumab",
                                                      phase=["PHASE3"])),
    ("trials", "cancer (broad), any status", _trials(condition="cancer")),
    ("trials", "alzheimer, 100/page", _trials(condition="Alzheimer", page_size=100)),
    ("trials", "diabetes, women 65+", _trials(condition="diabetes", sex="FEMALE", min_age=65, max_age=65)),
    ("trials", "filters only", _trials(phase=["PHASE2", "PHASE3"], status=["RECRUITING"], sex="FEMALE",
                                       min_age=60, max_age=60)),
    ("trials", "no text, newest first", _trials()),
    ("trials", "Essie AREA + eligibility", _trials(
        condition="lung cancer", eligibility_keywords='AREA[EligibilityCriteria]"EGFR" NOT brain')),
    ("trials", "sponsor + location", _trials(sponsor="Merck", location="Boston")),
    ("trials", "covid-19 vaccine", _trials(condition="COVID-19", intervention="vaccine")),
    ("trials", "get by id", lambda t, p: t.get_trial_by_nct_id("NCT06576635")),
    ("trials", "get 20 by id", lambda t, p: t.get_trials_by_nct_ids(
        [f"NCT{n:08d}" for n in range(102, 122)])),
    ("articles", "PubMed query, tags", _articles(
        '(EGFR[MeSH] OR "epidermal growth factor receptor") AND (resistance OR resistant)')),
    ("articles", "broad OR, by date, 100/page", _articles("cancer OR carcinoma", sort="date", page_size=100)),
    ("articles", "drug class, MeSH + words", _articles("\"Analgesics, Opioid\"[MeSH] AND (pain OR randomized)")),
    ("articles", "prefix + date range", _articles("hypertens*", date_start="2000-01-01", date_end="2010-12-31")),
    ("articles", "author", _articles("Smith J[au]")),
    ("articles", "deep page (5 of 20)", _articles("randomized controlled trial", page=5, page_size=20)),
    ("articles", "get by PMID", lambda t, p: p.get_article("22663011")),
]


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def main(repeat: int, keep_cache: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="offline-index-") as temp:
        cache = Path(temp) if not keep_cache else Path("var")
        env = {**os.environ, "COLLEAGUE_OFFLINE_INDEX_DIR": str(cache)}
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "backend", "index"], env=env, check=True)
        child = resource.getrusage(resource.RUSAGE_CHILDREN)
        print(f"index build ({'or reuse, ' if keep_cache else ''}fresh process): {time.perf_counter() - started:.1f} s "
              f"wall, {child.ru_utime + child.ru_stime:.1f} s CPU")
        size = sum(p.stat().st_size for p in cache.glob("offline-index-*.sqlite")) / 1e6
        print(f"index file: {size:.0f} MB")

        base = rss_mb()
        started = time.perf_counter()
        index = open_index(cache_dir=cache, progress=False)
        print(f"index open (cached): {(time.perf_counter() - started) * 1000:.0f} ms, "
              f"{len(index.trials)} trials, {len(index.articles)} articles")
        trials, pubmed = OfflineClinicalTrialsService(index), OfflinePubMedService(index)
        by_kind: dict[str, list[float]] = {"trials": [], "articles": []}
        print(f"{'search':40} {'results':>8} {'p50 ms':>8} {'p99 ms':>8}")
        for kind, name, run in QUERIES:
            result = await run(trials, pubmed)  # warm-up, and the hit count
            timings = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                await run(trials, pubmed)
                timings.append((time.perf_counter() - t0) * 1000)
            by_kind[kind] += timings
            total = getattr(result, "total_count", None)
            print(f"{kind + ': ' + name:40} {total if total is not None else '-':>8} "
                  f"{statistics.median(timings):8.2f} {pct(timings, 0.99):8.2f}")
        everything = by_kind["trials"] + by_kind["articles"]
        for kind, values in [*by_kind.items(), ("all searches", everything)]:
            print(f"{kind:>14}: p50 {pct(values, 0.5):6.2f} ms   p99 {pct(values, 0.99):6.2f} ms   (n={len(values)})")
        print(f"process RSS: {rss_mb():.0f} MB with the index open and searched "
              f"({rss_mb() - base:+.0f} MB over the interpreter with the app's imports)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--keep-cache", action="store_true", help="build into ./var (the app's cache) instead")
    args = parser.parse_args()
    asyncio.run(main(args.repeat, args.keep_cache))
