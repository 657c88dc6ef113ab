"""Facet counts over the embedded corpus: exact, over every match of the search, from the index.

The search narrows rows exactly as the table's search does (the same FTS expression and filter
conditions); the facet filters add `rowid IN (…facet rows…)` conditions. Each facet is then one
grouped count over the facet table, with window functions for "top N, the rest, how many
different values", so no request reads a record.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from backend.errors import InvalidInput
from backend.sources.offline.articles import build_article_filter
from backend.sources.offline.index import OfflineIndex
from backend.sources.offline.trials import build_trial_filter
from backend.stats.models import (
    ENROLLMENT_BINS,
    FACET_KINDS,
    MULTI_VALUED,
    ArticleStatsRequest,
    Bucket,
    FacetStats,
    StatsResponse,
    TrialStatsRequest,
    bin_key,
)


def _hits(table: str, where: list[str], args: list[Any], filters: dict[str, list[str]]) -> tuple[str, list[Any]]:
    """SELECT of the matching rowids, as SQL and arguments; joins the FTS table when a condition uses it."""
    alias, fts = table[0], f"{table}_fts"
    source = f"{table} {alias}"
    where, args = list(where), list(args)
    if any(fts in condition for condition in where):
        source += f" JOIN {fts} ON {fts}.rowid = {alias}.rowid"
    for facet, values in sorted(filters.items()):
        where.append(f"{alias}.rowid IN (SELECT rowid FROM {table[:-1]}_facets WHERE facet = ? "
                     f"AND value IN ({', '.join('?' * len(values))}))")
        args += [facet, *values]
    return f"SELECT {alias}.rowid FROM {source}" + (f" WHERE {' AND '.join(where)}" if where else ""), args


# Below this many hits, each hit's facet rows are looked up by key; above it, one walk of the facet index
# in value order (no sort) beats that many look-ups.
DRIVEN_MAX = 2000


def _scope(hits: str) -> tuple[str, str]:
    """(CTE of the hits, the condition limiting a scan to them); nothing for an unfiltered corpus."""
    if " WHERE " not in hits and " JOIN " not in hits:
        return "", ""
    return f"hits AS MATERIALIZED ({hits}), ", "AND rowid IN hits"


def _facet_rows(table: str, hits: str, total: int) -> tuple[str, str, str]:
    """(WITH prefix, FROM clause of the facet rows `f`, condition tying them to the hits)."""
    cte, scope = _scope(hits)
    if not cte:
        return "", f"{table}_facets f", ""
    if total <= DRIVEN_MAX:
        return cte, f"hits CROSS JOIN {table}_facets f", "AND f.rowid = hits.rowid"
    return cte, f"{table}_facets f", "AND f.rowid IN hits"


def _facet_stats(index: OfflineIndex, table: str, hits: str, args: list[Any], facets: Sequence[str],
                 total: int, limit: int) -> dict[str, FacetStats]:
    categorical = [f for f in facets if f != "enrollment"]
    out: dict[str, FacetStats] = {}
    if not categorical:
        return out
    marks = ", ".join("?" * len(categorical))
    cte, source, scope = _facet_rows(table, hits, total)
    # Categorical facets keep their top `limit` by count; timelines keep every year, in order.
    rows = index.query(f"""
        WITH {cte}
        counted AS (SELECT f.facet, f.value, count(*) AS n FROM {source}
                    WHERE f.facet IN ({marks}) {scope} GROUP BY f.facet, f.value),
        ranked AS (SELECT facet, value, n,
                          row_number() OVER (PARTITION BY facet ORDER BY n DESC, value) AS rank,
                          count(*) OVER (PARTITION BY facet) AS distinct_values,
                          sum(n) OVER (PARTITION BY facet) AS counted
                   FROM counted)
        SELECT facet, value, n, rank, distinct_values, counted FROM ranked""", [*args, *categorical])
    by_facet: dict[str, list[tuple[Any, ...]]] = {f: [] for f in categorical}
    for row in rows:
        by_facet[row[0]].append(row)
    # A single-valued facet's records with a value are its counts' sum; multi-valued ones need counting.
    present = {f: (found[0][5] if found else 0) for f, found in by_facet.items()}
    if multi := [f for f in categorical if f in MULTI_VALUED]:
        present |= dict(index.query(f"""
            {"WITH " + cte.rstrip(", ") if cte else ""}
            SELECT f.facet, count(DISTINCT f.rowid) FROM {source}
            WHERE f.facet IN ({", ".join("?" * len(multi))}) {scope} GROUP BY f.facet""", [*args, *multi]))
    for facet, found in by_facet.items():
        if FACET_KINDS.get(facet) == "timeline":
            shown = sorted(found, key=lambda r: r[1])
        else:
            shown = sorted((r for r in found if r[3] <= limit), key=lambda r: r[3])
        counted = found[0][5] if found else 0
        out[facet] = FacetStats.of(facet, [Bucket(value=r[1], count=r[2]) for r in shown],
                                   other=counted - sum(r[2] for r in shown), distinct=len(found),
                                   missing=total - int(present.get(facet, 0)), basis=total)
    return out


def _enrollment(index: OfflineIndex, hits: str, args: list[Any], total: int) -> FacetStats:
    cases = " ".join(f"WHEN enrollment < {high} THEN '{bin_key(low, high)}'"
                     for low, high in ENROLLMENT_BINS if high is not None)
    low, _ = ENROLLMENT_BINS[-1]
    cte, scope = _scope(hits)
    counts = dict(index.query(f"""
        {"WITH " + cte.rstrip(", ") if cte else ""}
        SELECT CASE {cases} ELSE '{bin_key(low, None)}' END AS bin, count(*) FROM trial_numbers
        WHERE enrollment IS NOT NULL {scope} GROUP BY bin""", args))
    return FacetStats.enrollment(counts, total, note="Participants as registered (actual or anticipated)")


def _run(index: OfflineIndex, table: str, hits: str, args: list[Any], facets: Sequence[str], limit: int,
         filters: dict[str, list[str]]) -> StatsResponse:
    try:
        total = int(index.query(f"SELECT count(*) FROM ({hits})", args)[0][0])
        stats = _facet_stats(index, table, hits, args, facets, total, limit)
        if "enrollment" in facets:
            stats["enrollment"] = _enrollment(index, hits, args, total)
    except sqlite3.OperationalError as exc:  # an FTS5 expression the query parser let through
        raise InvalidInput(f"Could not run this search offline: {exc}") from exc
    return StatsResponse(source="offline", total=total, filters=filters, sampled=False,
                         facets=[stats[f] for f in dict.fromkeys(facets)])


def trial_stats(index: OfflineIndex, request: TrialStatsRequest) -> StatsResponse:
    match, where, args = build_trial_filter(request.search.to_params())
    if match:
        where, args = ["trials_fts MATCH ?", *where], [match, *args]
    hits, hit_args = _hits("trials", where, args, request.filters)
    return _run(index, "trial", hits, hit_args, request.facets, request.limit, request.filters)


def article_stats(index: OfflineIndex, request: ArticleStatsRequest) -> StatsResponse:
    where, args = build_article_filter(request.search.to_params())
    hits, hit_args = _hits("articles", where, list(args), request.filters)
    return _run(index, "article", hits, hit_args, request.facets, request.limit, request.filters)
