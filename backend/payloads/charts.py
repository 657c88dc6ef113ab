"""The `chart` payload: a chart of the page's result set the model proposes (Accept pins it to the page's
charts panel). The tray draws it from the statistics route, so the figures are the route's, never the model's."""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from backend.registry import Omitted, payload_type
from backend.stats.models import ARTICLE_FACETS, TRIAL_FACETS, ArticleFacet, TrialFacet

ChartKind = Literal["bar", "stacked_bar", "pie", "donut", "histogram", "timeline", "map"]
CHART_KINDS = get_args(ChartKind)
FACETS = (*TRIAL_FACETS, *ARTICLE_FACETS)
Facet = TrialFacet | ArticleFacet
FilterValues = Annotated[list[Annotated[str, Field(max_length=300)]], Field(min_length=1, max_length=20)]


@payload_type(
    "chart", "A chart of the current results (facet counts over the whole result set)", marker="CHART:",
    suggestion=True, when="""when the user asks to see a breakdown, distribution or chart of the results \
("show me the phase breakdown", "which countries?"). The page draws it from the whole result set of its \
current search; call get_result_stats first when you want to discuss the numbers.""",
    notes=f"""kind: {", ".join(CHART_KINDS)} (map only for country; stacked_bar needs "stack_by", another facet).
facet on TrialScout: {", ".join(TRIAL_FACETS)}; on Tablizer: {", ".join(ARTICLE_FACETS)}.
filters (optional) narrow the counted records: facet -> list of values as registered (e.g. PHASE3).""")
class ChartSuggestion(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: ChartKind = Field(examples=["bar"])
    facet: Facet = Field(examples=["phase"])
    stack_by: Facet | Omitted = Field(None, description="another facet (stacked_bar only)")
    title: str | Omitted = Field(None, max_length=200, examples=["Trials by phase"])
    filters: Annotated[dict[str, FilterValues], Field(max_length=6)] | Omitted = Field(
        None, examples=[{"status": ["RECRUITING"]}])
