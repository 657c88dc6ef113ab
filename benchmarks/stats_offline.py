"""Statistics over the offline corpus: p50/p99 of `POST /api/stats/*`'s work (no HTTP), per request kind. Not a test.

    .venv/bin/python -m benchmarks.stats_offline [--repeat 15]     (from the project root; uses ./var's index)

Kinds: every trial facet over the WHOLE corpus (no search: 35,602 trials), the broadest search ("cancer", every
status), a typical one (melanoma, recruiting) with a facet filter, one facet (phase) over the whole corpus as a
chart draws it, and every article facet for a broad and a narrow query.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from backend.sources.offline.index import OfflineIndex, get_index
from backend.stats import offline
from backend.stats.models import ArticleStatsRequest, StatsResponse, TrialStatsRequest

Case = Callable[[OfflineIndex], StatsResponse]

CASES: dict[str, Case] = {
    "trials: all facets, whole corpus": lambda ix: offline.trial_stats(ix, TrialStatsRequest()),
    "trials: phase only, whole corpus": lambda ix: offline.trial_stats(ix, TrialStatsRequest(facets=["phase"])),
    "trials: all facets, 'cancer'": lambda ix: offline.trial_stats(
        ix, TrialStatsRequest(search={"condition": "cancer"})),
    "trials: all facets, melanoma recruiting + phase filter": lambda ix: offline.trial_stats(ix, TrialStatsRequest(
        search={"condition": "melanoma", "status": ["RECRUITING"]}, filters={"phase": ["PHASE2"]})),
    "articles: all facets, 'cancer OR therapy'": lambda ix: offline.article_stats(
        ix, ArticleStatsRequest(search={"query": "cancer OR therapy"})),
    "articles: all facets, 'melanoma'": lambda ix: offline.article_stats(
        ix, ArticleStatsRequest(search={"query": "melanoma"})),
}


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    index = get_index()
    everything: list[float] = []
    for name, case in CASES.items():
        case(index)  # warm the page cache
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            result = case(index)
            times.append((time.perf_counter() - started) * 1000)
        everything += times
        print(f"{name:58s} total={result.total:>6,}  p50 {statistics.median(times):7.1f} ms  "
              f"p99 {_percentile(times, 0.99):7.1f} ms")
    print(f"{'all requests':58s} {'':13s}p50 {statistics.median(everything):7.1f} ms  "
          f"p99 {_percentile(everything, 0.99):7.1f} ms   (load average {open('/proc/loadavg').read().split()[0]})")


if __name__ == "__main__":
    main()
