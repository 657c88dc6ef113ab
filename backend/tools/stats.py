"""`get_result_stats`: the figures the charts draw, for the model to read (TrialScout and Tablizer).

The search is the page's own (from its context), so what the model says and what the charts panel shows
come from one result set; the model chooses facets and facet filters, never SQL.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from backend.errors import invalid_input
from backend.registry import ToolContext, ToolResult, tool
from backend.stats import service
from backend.stats.models import (
    ARTICLE_FACETS,
    TRIAL_FACETS,
    ArticleStatsRequest,
    FacetStats,
    StatsResponse,
    TrialSearchFields,
    TrialStatsRequest,
)


class ResultStatsInput(BaseModel):
    dataset: Literal["trials", "articles"] | None = Field(
        None, description="trials (TrialScout) or articles (Tablizer); default: the page's")
    facets: list[str] = Field(default_factory=list, max_length=10,
                              description=f"Trials: {', '.join(TRIAL_FACETS)}. Articles: {', '.join(ARTICLE_FACETS)}. "
                                          "Empty: all of them")
    filters: dict[str, list[str]] = Field(default_factory=dict,
                                          description="Narrow the counted records: facet -> values (e.g. PHASE3)")
    limit: int = Field(10, ge=1, le=50, description="Values per facet")


def _trial_search(context: Mapping[str, Any]) -> dict[str, Any]:
    fields = TrialSearchFields.model_fields
    search = {k: v for k, v in context.items() if k in fields and v not in (None, "", [])}
    if search.get("sex") == "ALL":
        del search["sex"]
    return search


def _format(stats: StatsResponse, what: str) -> str:
    lines = [f"{stats.total:,} {what} in the result set ({stats.source}"
             + (f"; filtered by {stats.filters}" if stats.filters else "") + ")."]
    if stats.note:
        lines.append(stats.note)
    for facet in stats.facets:
        lines.append(_facet_line(facet))
    return "\n".join(lines)


ENUM_FACETS = frozenset({"phase", "status", "study_type", "sponsor_class", "intervention_type"})
PHASE_LABELS = {"EARLY_PHASE1": "Early Phase 1", "NA": "N/A (not phased)"}


def _value(facet: str, value: str) -> str:
    """Enumerations read as words for the answer, with the registered value the filters take: "Phase 2 (PHASE2)"."""
    if facet not in ENUM_FACETS:
        return value
    label = PHASE_LABELS.get(value) or (value.replace("PHASE", "Phase ") if facet == "phase"
                                        else value.replace("_", " ").capitalize())
    return f"{label} ({value})"


def _facet_line(f: FacetStats) -> str:
    shown = ", ".join(f"{_value(f.facet, b.value)}: {b.count:,}" for b in f.buckets) or "none recorded"
    extra = [f"{f.other:,} in {f.distinct - len(f.buckets):,} other values" if f.other else "",
             f"{f.missing:,} with none" if f.missing else "",
             "several per record" if f.multi_valued else "",
             f"SAMPLED over {f.basis:,}" if f.sampled else "", f.note or ""]
    return f"- {f.label} ({f.facet}): {shown}" + "".join(f" | {e}" for e in extra if e)


@tool(is_global=False)
async def get_result_stats(params: ResultStatsInput, ctx: ToolContext) -> ToolResult:
    """Counts over the WHOLE result set of the page's current search (not just the loaded rows): trials by
    phase, status, study type, sponsor, enrollment, start year, condition, country; articles by year,
    journal, publication type, MeSH term. The same figures the charts draw."""
    context = ctx.page_context
    dataset = params.dataset or ("articles" if context.get("current_page") == "tablizer" or "query" in context
                                 else "trials")
    with invalid_input():
        if dataset == "trials":
            request: TrialStatsRequest | ArticleStatsRequest = TrialStatsRequest(
                search=_trial_search(context), facets=params.facets or list(TRIAL_FACETS), filters=params.filters,
                limit=params.limit)
        else:
            query = str(context.get("query") or "").strip()
            if not query:
                return ToolResult(text="There is no PubMed search on the page yet: statistics need one.")
            search = {"query": query, "date_start": context.get("date_start") or None,
                      "date_end": context.get("date_end") or None}
            request = ArticleStatsRequest(search=search, facets=params.facets or list(ARTICLE_FACETS),
                                          filters=params.filters, limit=params.limit)
    sources = ctx.require_sources()
    stats = (await service.trial_stats(sources, request) if isinstance(request, TrialStatsRequest)
             else await service.article_stats(sources, request))
    return ToolResult(text=_format(stats, dataset))

