"""Facet counts from the real APIs, within their rate limits, saying what is sampled.

ClinicalTrials.gov v2 has no per-query facet counts, but it pages 1,000 field-projected studies a
request: the first `TRIAL_SAMPLE` matches are fetched (one or two requests at 40/min) and counted
with the same per-record facet rows as the offline index; past that the figures say `sampled`.
E-utilities counts are exact per term: years and common publication types are one `esearch`
count each (`(query) AND 2021[dp]`), facet filters become field tags ([dp], [jour], [pt], [mh]);
journals and MeSH terms have no such list, so they are counted over the first `ARTICLE_SAMPLE` records.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from datetime import date
from typing import TypeVar

from backend.sources.clinical_trials import ClinicalTrialsService
from backend.sources.ctgov_records import parse_study
from backend.sources.models import Article, ArticleSearchParams, TrialDetail
from backend.sources.offline.facets import article_facet_rows, trial_facet_rows
from backend.sources.pubmed import PubMedService
from backend.stats.models import (
    FACET_KINDS,
    ArticleStatsRequest,
    Bucket,
    FacetStats,
    StatsResponse,
    TrialStatsRequest,
    enrollment_bin,
)

TRIAL_SAMPLE = 2000
ARTICLE_SAMPLE = 100
YEARS_COUNTED = 10
COMMON_PUBLICATION_TYPES = ("Journal Article", "Review", "Randomized Controlled Trial", "Clinical Trial",
                            "Meta-Analysis", "Systematic Review", "Case Reports", "Observational Study")
STATS_FIELDS = ("NCTId", "Phase", "OverallStatus", "StudyType", "LeadSponsorClass", "LeadSponsorName",
                "EnrollmentCount", "StartDate", "Condition", "InterventionType", "LocationCountry")
_TAGS = {"year": "dp", "journal": "jour", "publication_type": "pt", "mesh": "mh"}

R = TypeVar("R")


def _counted(facet: str, values: Counter[str], present: int, basis: int, limit: int, *, sampled: bool,
             note: str | None = None) -> FacetStats:
    ranked = sorted(values.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = sorted(ranked, key=lambda kv: kv[0]) if FACET_KINDS.get(facet) == "timeline" else ranked[:limit]
    return FacetStats.of(facet, [Bucket(value=v, count=n) for v, n in shown],
                         other=sum(values.values()) - sum(n for _, n in shown), distinct=len(values),
                         missing=basis - present, sampled=sampled, basis=basis, note=note)


def _keep(rows: Iterable[tuple[str, str]], filters: dict[str, list[str]]) -> bool:
    have: dict[str, set[str]] = {}
    for facet, value in rows:
        have.setdefault(facet, set()).add(value)
    return all(have.get(facet, set()) & set(values) for facet, values in filters.items())


async def trial_stats(service: ClinicalTrialsService, request: TrialStatsRequest) -> StatsResponse:
    total, studies = await service.sample_studies(request.search.to_params(), STATS_FIELDS, TRIAL_SAMPLE)
    trials: list[TrialDetail] = [parse_study(s) for s in studies]
    sampled = total > len(trials)
    if request.filters:
        trials = [t for t in trials if _keep(trial_facet_rows(t), request.filters)]
    basis = len(trials)
    facets: list[FacetStats] = []
    for facet in dict.fromkeys(request.facets):
        if facet == "enrollment":
            counts = Counter(enrollment_bin(t.enrollment) for t in trials if t.enrollment is not None)
            facets.append(FacetStats.enrollment(counts, basis, sampled=sampled))
            continue
        values, present = _tally(trials, trial_facet_rows, facet)
        facets.append(_counted(facet, values, present, basis, request.limit, sampled=sampled))
    note = (f"Counted over the first {len(studies):,} of {total:,} matching trials (ClinicalTrials.gov "
            "pages 1,000 at a time; the sample is in the registry's order, not random)") if sampled else None
    return StatsResponse(source="live", total=basis if request.filters else total, filters=request.filters,
                         facets=facets, sampled=sampled, note=note)


def _term(value: str, tag: str) -> str:
    return f'"{value.replace(chr(34), "")}"[{tag}]'


def _filtered_query(request: ArticleStatsRequest) -> str:
    clauses = [f"({request.search.query})"]
    for facet, values in sorted(request.filters.items()):
        clauses.append("(" + " OR ".join(_term(v, _TAGS[facet]) for v in values) + ")")
    return " AND ".join(clauses)


async def _count(service: PubMedService, query: str, start: date | None, end: date | None) -> int:
    count, _, _ = await service.esearch(ArticleSearchParams(query=query, date_start=start, date_end=end, page_size=1))
    return count


async def article_stats(service: PubMedService, request: ArticleStatsRequest, *, today: date | None = None,
                        ) -> StatsResponse:
    query = _filtered_query(request)
    start, end = request.search.date_start, request.search.date_end
    total = await _count(service, query, start, end)
    facets: list[FacetStats] = []
    sample: list[Article] | None = None
    for facet in dict.fromkeys(request.facets):
        if facet == "year":
            last = (end or today or date.today()).year
            first = max(last - YEARS_COUNTED + 1, start.year if start else 0)
            counts = {str(y): await _count(service, f"{query} AND {y}[dp]", start, end) for y in range(first, last + 1)}
            stats = _counted("year", Counter({y: n for y, n in counts.items() if n}), total, total, request.limit,
                             sampled=False, note=f"Exact counts for {first}–{last}; earlier years are 'other'")
            facets.append(stats.model_copy(update={"other": total - sum(counts.values()), "missing": 0}))
        elif facet == "publication_type":
            found = Counter({pt: n for pt in COMMON_PUBLICATION_TYPES
                             if (n := await _count(service, f"{query} AND {_term(pt, 'pt')}", start, end))})
            facets.append(_counted(facet, found, total, total, request.limit, sampled=False,
                                   note="Exact counts of common publication types only").model_copy(
                                       update={"other": 0, "missing": 0}))
        else:
            if sample is None:
                sample = await _sample(service, query, start, end)
            values, present = _tally(sample, article_facet_rows, facet)
            facets.append(_counted(facet, values, present, len(sample), request.limit,
                                   sampled=total > len(sample),
                                   note=f"Counted over the {len(sample)} most relevant of {total:,} articles"
                                   if total > len(sample) else None))
    sampled = any(f.sampled for f in facets)
    return StatsResponse(source="live", total=total, filters=request.filters, facets=facets, sampled=sampled,
                         note="Some facets are counted over a sample of the results" if sampled else None)


async def _sample(service: PubMedService, query: str, start: date | None, end: date | None) -> list[Article]:
    _, ids, _ = await service.esearch(ArticleSearchParams(query=query, date_start=start, date_end=end,
                                                          page_size=ARTICLE_SAMPLE))
    return await service.efetch(ids) if ids else []


def _tally(records: Iterable[R], rows: Callable[[R], Iterable[tuple[str, str]]],
           facet: str) -> tuple[Counter[str], int]:
    """How often each value of `facet` occurs over `records` (`rows`: a record's (facet, value) pairs),
    and how many records have one."""
    values: Counter[str] = Counter()
    present = 0
    for record in records:
        mine = [v for f, v in rows(record) if f == facet]
        values.update(mine)
        present += bool(mine)
    return values, present
