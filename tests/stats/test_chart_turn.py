"""Charts in the conversation: the demo model reads `get_result_stats` (the figures of the page's whole result
set) and proposes a `chart` card; the tool's figures are the statistics route's."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from backend.registry import resolve
from backend.registry.builtins import load_builtins
from tests.sse import Event, parse

CONTEXT = {"current_page": "trialscout", "condition": "melanoma", "status": ["RECRUITING"], "phase": [],
           "trials": [], "loaded_count": 0, "total_matched": 0}


def _turn(client: TestClient, message: str, context: dict[str, Any], app: str) -> list[Event]:
    r = client.post("/api/chat/stream", json={"message": message, "context": context, "app": app})
    assert r.status_code == 200, r.text
    return parse(r.text)


def test_both_pages_offer_the_chart_card_and_the_stats_tool() -> None:
    load_builtins()
    for page in ("trialscout", "tablizer"):
        resolved = resolve(page)
        assert "chart" in resolved.payload_names and "filter_suggestion" in resolved.payload_names
        assert "get_result_stats" in resolved.tool_names


def test_the_demo_model_reads_the_figures_then_proposes_a_phase_chart(demo: TestClient) -> None:
    events = _turn(demo, "Show me the phase breakdown", CONTEXT, "trialscout")
    calls = [e.data for e in events if e.event == "tool_start"]
    assert [(c["tool"], c["input"]["facets"]) for c in calls] == [("get_result_stats", ["phase"])]
    cards = events[-1].data["payload"]["payloads"]
    assert [(c["type"], c["data"]["facet"], c["data"]["kind"]) for c in cards] == [("chart", "phase", "bar")]

    stats = demo.post("/api/stats/trials", json={"search": {"condition": "melanoma", "status": ["RECRUITING"]},
                                                  "facets": ["phase"], "limit": 10}).json()
    text = "".join(e.data["text"] for e in events if e.event == "text_delta")
    assert f"{stats['total']:,} trials in the result set" in text
    for bucket in stats["facets"][0]["buckets"]:
        assert f"({bucket['value']}): {bucket['count']:,}" in text
    assert "Phase 2 (PHASE2)" in text


def test_on_tablizer_a_journal_chart_over_the_query(demo: TestClient) -> None:
    context = {"current_page": "tablizer", "query": "melanoma", "articles": [], "loaded_count": 0}
    events = _turn(demo, "Chart the journals", context, "tablizer")
    assert events[-1].event == "complete"
    cards = events[-1].data["payload"]["payloads"]
    assert [(c["type"], c["data"]["facet"]) for c in cards] == [("chart", "journal")]
