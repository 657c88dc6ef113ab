"""The demo model's charts: "show me the phase breakdown" reads the figures with `get_result_stats`, then
proposes a `chart` card of that facet (the page draws it from the same statistics route).

Only what the tool returned is quoted; with no tool on offer the card alone is proposed.
"""

from __future__ import annotations

import re

from backend.demo.brain import DemoRequest, intent, marker_json
from backend.demo.wire import Reply

WANTS_CHART = re.compile(r"\b(chart|plot|graph|breakdown|distribution|visuali[sz]e|histogram|timeline|pie|donut|"
                         r"world map|map of)\b", re.I)
# Phrases → facet, most specific first (e.g. "sponsor class" before "sponsor").
TRIAL_FACET_WORDS: tuple[tuple[str, str], ...] = (
    (r"phases?", "phase"), (r"status(es)?|recruit", "status"), (r"study types?|observational|interventional",
                                                                 "study_type"),
    (r"sponsor class(es)?|industry|funder types?", "sponsor_class"), (r"sponsors?", "sponsor"),
    (r"enrol+ment|sizes?|participants", "enrollment"), (r"start(ed)? (years?|dates?)|over time|years?", "start_year"),
    (r"intervention types?", "intervention_type"), (r"conditions?|diseases?", "condition"),
    (r"countr(y|ies)|map|where", "country"),
)
ARTICLE_FACET_WORDS: tuple[tuple[str, str], ...] = (
    (r"publication types?|article types?|study designs?", "publication_type"), (r"journals?", "journal"),
    (r"mesh|topics?|subjects?", "mesh"), (r"years?|over time|timeline|published", "year"),
)
KIND_WORDS: tuple[tuple[str, str], ...] = (
    (r"stacked", "stacked_bar"), (r"donut|doughnut", "donut"), (r"pie", "pie"), (r"histogram", "histogram"),
    (r"timeline|over time", "timeline"), (r"map", "map"),
)
DEFAULT_KIND = {"enrollment": "histogram", "start_year": "timeline", "year": "timeline", "country": "map",
                "study_type": "donut", "sponsor_class": "pie"}
LABELS = {"phase": "phase", "status": "status", "study_type": "study type", "sponsor_class": "sponsor class",
          "sponsor": "lead sponsor", "enrollment": "enrollment", "start_year": "start year", "condition": "condition",
          "intervention_type": "intervention type", "country": "country", "year": "publication year",
          "journal": "journal", "publication_type": "publication type", "mesh": "MeSH term"}


def _facet(req: DemoRequest, text: str) -> str | None:
    words = ARTICLE_FACET_WORDS if req.page == "tablizer" else TRIAL_FACET_WORDS
    for pattern, facet in words:
        if re.search(rf"\b({pattern})\b", text, re.I):
            return facet
    return None


def _kind(facet: str, text: str) -> str:
    for pattern, kind in KIND_WORDS:
        if re.search(rf"\b({pattern})\b", text, re.I) and (kind != "map" or facet == "country"):
            return kind if kind != "stacked_bar" else "bar"  # a stack needs a second facet the demo does not guess
    return DEFAULT_KIND.get(facet, "bar")


def _card(req: DemoRequest) -> dict[str, str] | None:
    text = req.user_text
    if req.page not in ("trialscout", "tablizer") or not req.offers_marker("CHART:") or not WANTS_CHART.search(text):
        return None
    facet = _facet(req, text)
    if facet is None:
        return None
    what = "trials" if req.page == "trialscout" else "articles"
    return {"kind": _kind(facet, text), "facet": facet, "title": f"{what.capitalize()} by {LABELS[facet]}"}


@intent(priority=190)
def chart_request(req: DemoRequest) -> Reply | None:
    """Read the figures first when the tool is offered; otherwise propose the chart straight away."""
    if req.tool_results:
        return None
    card = _card(req)
    if card is None:
        return None
    if req.offers_tool("get_result_stats") and "get_result_stats" not in req.tool_calls_this_turn():
        return Reply.tool("get_result_stats", {"facets": [card["facet"]], "limit": 10},
                          preface=f"Counting the {LABELS[card['facet']]} of the whole result set…")
    return Reply.text(f"Here is a chart of the {LABELS[card['facet']]}; Accept pins it to the charts panel.\n\n"
                      + marker_json("CHART:", card))


@intent(priority=90)
def chart_after_stats(req: DemoRequest) -> Reply | None:
    """After `get_result_stats`: quote its lines for the facet, then the chart card."""
    stats = [text for name, _, text, error in req.tool_results if name == "get_result_stats" and not error]
    card = _card(req)
    if not stats or card is None:
        return None
    lines = stats[0].splitlines()
    facet_line = next((line for line in lines if f"({card['facet']})" in line), "")
    summary = "\n".join(filter(None, [lines[0] if lines else "", facet_line]))
    return Reply.text(f"{summary}\n\nHere is that as a chart; Accept pins it to the charts panel.\n\n"
                      + marker_json("CHART:", card))
