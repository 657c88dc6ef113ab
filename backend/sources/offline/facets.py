"""The facet values of one record, as the offline index stores them for statistics.

One row per (facet, value) a record has: a trial in Phase 1/2 counts under both phases, a trial
with sites in three countries under each country. Single-valued facets simply yield one row.
Numbers that are binned at query time (enrollment) live in their own column, not here, so the
bins can change without a rebuild. Values are stored as registered: labels are the client's job.
"""

from __future__ import annotations

from collections.abc import Iterator

from backend.sources.models import Article, TrialDetail

TRIAL_FACETS = ("phase", "status", "study_type", "sponsor_class", "sponsor", "start_year", "condition",
                "intervention_type", "country")
ARTICLE_FACETS = ("year", "journal", "publication_type", "mesh")


def _year(partial_date: str | None) -> str | None:
    return partial_date[:4] if partial_date and partial_date[:4].isdigit() else None


def _each(facet: str, values: list[str | None]) -> Iterator[tuple[str, str]]:
    for value in dict.fromkeys(v.strip() for v in values if v and v.strip()):
        yield facet, value


def trial_facet_rows(t: TrialDetail) -> Iterator[tuple[str, str]]:
    yield from _each("phase", list(t.phase))
    yield from _each("status", [t.status])
    yield from _each("study_type", [t.study_type])
    yield from _each("sponsor_class", [t.sponsor_class])
    yield from _each("sponsor", [t.sponsor])
    yield from _each("start_year", [_year(t.start_date)])
    yield from _each("condition", list(t.conditions))
    yield from _each("intervention_type", list(t.intervention_types))
    yield from _each("country", [loc.country for loc in t.locations])


def article_facet_rows(a: Article) -> Iterator[tuple[str, str]]:
    yield from _each("year", [str(a.year) if a.year else None])
    yield from _each("journal", [a.journal])
    yield from _each("publication_type", list(a.publication_types))
    yield from _each("mesh", list(a.mesh_terms))
