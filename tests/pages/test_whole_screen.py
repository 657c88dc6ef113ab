"""The whole screen reaches the model: filter chips (and how many loaded rows they hide), pinned charts, the
open item's key fields, and total / loaded / shown counts named as such, on both pages; over the fake Messages
API with the real anthropic SDK, as Claude would receive them; and within the context budget."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from backend.pages.budget import budget_chars
from backend.registry import REGISTRY
from backend.registry.builtins import load_builtins
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.fake_page import chat, page_context_of

TRIALS = [{"nct_id": f"NCT0700000{i}", "title": f"Trial {i}", "phase": ["PHASE3" if i % 2 else "PHASE2"],
           "status": "RECRUITING", "enrollment": 100 * i} for i in range(1, 7)]
SHOWN_TRIALS = [t for t in TRIALS if t["phase"] == ["PHASE3"]]
TRIALSCOUT = {
    "current_page": "trialscout", "condition": "melanoma", "phase": [], "status": [], "total_matched": 480,
    "loaded_count": 6, "shown_count": 3, "trials": SHOWN_TRIALS,
    "filters": [{"label": "Phase: Phase 3", "field": "phase", "op": "equals", "value": "PHASE3", "scope": "rows"}],
    "pinned_charts": [{"title": "Trials by phase", "facet": "phase", "kind": "bar"},
                      {"title": None, "facet": "status", "kind": "stacked_bar", "stack_by": "phase"}],
    "viewer": {"nct_id": "NCT07000001", "title": "Trial 1", "phase": ["PHASE3"], "status": "RECRUITING",
               "conditions": ["Melanoma", "Brain Metastases"], "primary_outcomes": ["Overall survival"]},
}
TABLIZER = {
    "current_page": "tablizer", "query": "melanoma", "total_matched": 2400, "loaded_count": 20, "shown_count": 4,
    "articles": [{"pmid": f"3200000{i}", "title": f"Article {i}", "journal": "Lancet", "year": 2024} for i in range(4)],
    "filters": [{"label": "Journal is Lancet", "field": "journal", "op": "equals", "value": "Lancet", "scope": "rows"},
                {"label": "Year ≥ 2024", "field": "year", "op": "gte", "value": 2024, "scope": "rows"}],
    "pinned_charts": [{"title": "Articles by year", "facet": "year", "kind": "histogram"}],
    "viewer": {"pmid": "32000001", "title": "Article 1", "journal": "Lancet", "year": 2024,
               "abstract": "Background. " + "Long abstract text. " * 200},
}


def build(context: dict[str, Any]) -> str:
    load_builtins()
    return REGISTRY.pages[context["current_page"]].context_builder(context)


@pytest.mark.parametrize(("context", "expected"), [
    (TRIALSCOUT, ["- Results: 6 loaded of 480 total | 3 shown in the table after filters",
                  "- Active filters (1; they hide 3 of the 6 loaded rows): Phase: Phase 3 (field phase equals PHASE3)",
                  "- Pinned charts (2): Trials by phase (bar of phase); status (stacked_bar of status by phase)",
                  "- Detail view open: NCT07000001", "  conditions: Melanoma, Brain Metastases",
                  "  primary outcomes: Overall survival"]),
    (TABLIZER, ["- Results: 20 loaded of 2400 total | 4 shown in the table after filters",
                "- Active filters (2; they hide 16 of the 20 loaded rows): Journal is Lancet (field journal equals "
                "Lancet); Year ≥ 2024 (field year gte 2024)",
                "- Pinned charts (1): Articles by year (histogram of year)",
                "- Detail view open: 32000001", "  journal: Lancet"]),
], ids=["trialscout", "tablizer"])
def test_the_context_names_what_is_on_screen(context: dict[str, Any], expected: list[str]) -> None:
    text = build(context)
    for line in expected:
        assert line in text, (line, text)


def test_nothing_on_screen_is_said_as_nothing() -> None:
    text = build({"current_page": "trialscout", "condition": "melanoma", "total_matched": 12, "loaded_count": 12})
    assert "- Active filters: none" in text and "- Pinned charts: none" in text
    assert "shown in the table" not in text  # no shown count sent: none claimed


def test_a_huge_screen_stays_within_the_budget() -> None:
    many = {**TRIALSCOUT, "filters": [{"label": "x" * 500, "field": "f" * 500, "op": "contains", "value": "v" * 5000}
                                      for _ in range(500)],
            "pinned_charts": [{"title": "t" * 500, "facet": "f", "kind": "bar"} for _ in range(500)],
            "viewer": {"nct_id": "NCT07000001", **{f"k{i}": "v" * 5000 for i in range(100)}}}
    text = build(many)
    assert len(text) <= budget_chars()
    assert "[488 more]" in text  # the chips not listed are counted


def test_claude_receives_the_filters_charts_and_open_item(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    for context in (TRIALSCOUT, TABLIZER):
        chat(alice, "Why did I get so few results?", context=context)
        sent = page_context_of(fake_llm.requests[-1])
        assert "Active filters (" in sent and "they hide" in sent
        assert "Pinned charts (" in sent
        assert "Detail view open: " in sent and "  title: " in sent
        assert " shown in the table after filters" in sent
