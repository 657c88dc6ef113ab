"""The `chart` payload: a chart of the page's result set the model proposes (Accept pins it to the page's
charts panel). The tray draws it from the statistics route, so the figures are the route's, never the model's."""

from __future__ import annotations

from backend.registry import PayloadType, register_payload_type
from backend.stats.models import ARTICLE_FACETS, TRIAL_FACETS

CHART_KINDS = ("bar", "stacked_bar", "pie", "donut", "histogram", "timeline", "map")
FACETS = (*TRIAL_FACETS, *ARTICLE_FACETS)

register_payload_type(PayloadType(
    name="chart",
    description="A chart of the current results (facet counts over the whole result set)",
    source="llm",
    parse_marker="CHART:",
    llm_instructions=f"""CHART - when the user asks to see a breakdown, distribution or chart of the results \
("show me the phase breakdown", "which countries?"). The page draws it from the whole result set of its \
current search; call get_result_stats first when you want to discuss the numbers.

CHART: {{"kind": "bar", "facet": "phase", "title": "Trials by phase", "filters": {{"status": ["RECRUITING"]}}}}

kind: {", ".join(CHART_KINDS)} (map only for country; stacked_bar needs "stack_by", another facet).
facet on TrialScout: {", ".join(TRIAL_FACETS)}; on Tablizer: {", ".join(ARTICLE_FACETS)}.
filters (optional) narrow the counted records: facet -> list of values as registered (e.g. PHASE3).""",
    schema={"type": "object", "required": ["kind", "facet"], "additionalProperties": False, "properties": {
        "kind": {"enum": list(CHART_KINDS)},
        "facet": {"enum": list(FACETS)},
        "stack_by": {"enum": list(FACETS)},
        "title": {"type": "string", "maxLength": 200},
        "filters": {"type": "object", "maxProperties": 6, "additionalProperties": {
            "type": "array", "minItems": 1, "maxItems": 20, "items": {"type": "string", "maxLength": 300}}}}},
))
