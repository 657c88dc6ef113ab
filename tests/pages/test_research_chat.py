"""Tablizer and TrialScout chats end to end: through the SSE endpoint with the demo model (no key) and
with the scripted fake, over the offline corpus."""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from backend.db.session import Database
from tests.fakes.anthropic_server import FakeAnthropic, Script, tool_reply
from tests.fakes.fake_page import chat, page_context_of
from tests.sse import text_of, types

TRIALSCOUT = {"current_page": "trialscout", "condition": "", "phase": [], "status": [], "trials": [],
              "total_matched": 0, "loaded_count": 0, "ai_columns": []}
TABLIZER = {"current_page": "tablizer", "query": "", "articles": [], "total_matched": 0, "loaded_count": 0}


def payloads(events: list[Any]) -> list[dict[str, Any]]:
    return events[-1].data["payload"]["payloads"]


def test_demo_fills_a_trial_search(demo: TestClient) -> None:
    events = chat(demo, "Find Phase 3 immunotherapy trials for NSCLC", context=TRIALSCOUT)
    assert types(events) == ["conversation", "status", "text_delta", "usage", "context_update", "complete"]
    assert "TRIAL_SEARCH" not in text_of(events)
    [card] = payloads(events)
    assert card["type"] == "trial_search_suggestion" and card["source"] == "llm"
    assert card["data"]["condition"] == "non-small cell lung cancer"
    assert "pembrolizumab" in card["data"]["intervention"] and card["data"]["phase"] == ["PHASE3"]
    assert card["data"]["status"] == ["RECRUITING", "ACTIVE_NOT_RECRUITING"]
    assert events[-1].data["payload"]["suggested_values"]
    # Accept runs the card as the form's search: the tray's own chip finds trials in the offline corpus.
    form = {k: v for k, v in card["data"].items() if k != "explanation"}
    found = demo.get("/api/trials/search", params={**form, "page_size": 10}).json()
    assert found["total_count"] > 0, found
    conv = events[0].data["conversation_id"]
    assert [c["id"] for c in demo.get("/api/conversations?app=trialscout").json()] == [conv]
    assert demo.get("/api/conversations?app=tablizer").json() == []


def test_demo_builds_a_pubmed_query_that_runs(demo: TestClient) -> None:
    events = chat(demo, "Find EGFR resistance articles", context=TABLIZER)
    [card] = payloads(events)
    query = card["data"]["query"]
    assert card["type"] == "pubmed_query_suggestion" and "[MeSH]" in query and " AND " in query and " OR " in query
    found = demo.get("/api/articles/search", params={"q": query}).json()
    assert found["total_count"] > 0
    assert all("egfr" in (a["title"] + a["abstract"]).lower() for a in found["articles"])
    assert [c["app"] for c in demo.get("/api/conversations?app=tablizer").json()] == ["tablizer"]


@pytest.mark.parametrize(("message", "kind", "name"), [
    ("I only want trials that allow brain metastases", "boolean", "Allows brain metastases?"),
    ("Add a column for the primary endpoint", "text", "Primary endpoint"),
    ("add a column that says whether each study is randomized", "boolean", "Randomized?"),
    ("add a column with the eligible age range", "text", "Eligible age range"),
    ("Add a column that flags articles about drug resistance", "boolean", "Drug resistance?"),
])
def test_demo_suggests_ai_columns(demo: TestClient, message: str, kind: str, name: str) -> None:
    [card] = payloads(chat(demo, message, context=TRIALSCOUT))
    assert card["type"] == "ai_column_suggestion"
    assert (card["data"]["type"], card["data"]["name"]) == (kind, name)


def test_demo_counts_phases_from_staged_trials(demo: TestClient) -> None:
    trials = [{"nct_id": f"NCT{i:08d}", "title": f"Trial {i}", "phase": ["PHASE3"] if i < 18 else ["PHASE2"],
               "status": "RECRUITING"} for i in range(35)]
    events = chat(demo, "What's the most common phase among these?",
                  context={**TRIALSCOUT, "trials": trials, "loaded_count": 35})
    assert [e.data["tool"] for e in events if e.event == "tool_start"] == ["get_staged_items"]
    message = events[-1].data["payload"]["message"]
    assert "the 35 loaded trials" in message
    assert "Phase 3: 18 of 35 (51%)" in message and "Phase 2: 17 of 35 (49%)" in message
    assert "most common phase is **Phase 3**" in message


def test_demo_looks_up_a_trial_and_summarises_it(demo: TestClient) -> None:
    events = chat(demo, "Tell me about NCT06382129", context=TRIALSCOUT)
    assert types(events) == ["conversation", "status", "text_delta", "usage", "tool_start", "tool_complete",
                             "text_delta", "usage", "context_update", "complete"]
    done = events[-1].data["payload"]
    [card] = done["payloads"]
    assert card["type"] == "trial_details" and card["source"] == "tool" and card["data"]["nct_id"] == "NCT06382129"
    assert "NCT06382129" in done["message"] and "Primary outcomes" in done["message"]
    assert card["data"]["title"] in done["message"]


def test_demo_summarises_an_article(demo: TestClient) -> None:
    events = chat(demo, "summarise PMID 22663011", context=TABLIZER)
    done = events[-1].data["payload"]
    assert done["tool_history"][0]["tool_name"] == "get_pubmed_article"
    assert "PMID: 22663011" in done["message"] and "In short:" in done["message"]


def test_unknown_trial_is_an_honest_tool_error(demo: TestClient) -> None:
    events = chat(demo, "Tell me about NCT09999999", context=TRIALSCOUT)
    assert next(e for e in events if e.event == "tool_complete").data["is_error"] is True
    assert "No trial NCT09999999" in events[-1].data["payload"]["message"]


def test_tools_are_offered_and_refused_per_page(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    fake_llm.script(Script.answer(tool_reply("search_trials", {"condition": "melanoma"})), Script.text("Sorry."))
    events = chat(alice, "find trials", context=TABLIZER)
    offered = [t["name"] for t in fake_llm.requests[0]["tools"]]
    assert offered == ["search_pubmed", "get_pubmed_article", "get_full_text", "get_staged_items", "get_result_stats"]
    result = fake_llm.requests[1]["messages"][-1]["content"][0]
    assert result["is_error"] and "not available here" in result["content"]
    assert next(e for e in events if e.event == "tool_complete").data["is_error"]

    fake_llm.script(Script.answer(tool_reply("search_trials", {"condition": "melanoma", "phase": ["PHASE3"],
                                                               "page_size": 3})), Script.text("Found some."))
    events = chat(alice, "find trials", context=TRIALSCOUT)
    # No patient in the panel: none of the screening tools (tests/registry: they join with one)
    assert [t["name"] for t in fake_llm.requests[2]["tools"]] == [
        "search_pubmed", "search_trials", "get_trial", "get_staged_items", "get_result_stats"]
    card = next(e for e in events if e.event == "tool_complete").data["payload"]
    assert card["type"] == "trial_search_results" and card["data"]["params"]["status"] == ["RECRUITING"]
    model_saw = fake_llm.requests[3]["messages"][-1]["content"][0]["content"]
    assert model_saw.startswith("Search (condition='melanoma', phase=['PHASE3'], status=['RECRUITING'])")
    assert len(card["data"]["trials"]) <= 3 and all("PHASE3" in t["phase"] for t in card["data"]["trials"])


def test_invalid_trial_search_card_is_dropped(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    fake_llm.script(Script.text('Try: TRIAL_SEARCH: {"condition": "melanoma", "phase": ["PHASE5"], '
                                '"explanation": "x"}'))
    events = chat(alice, "search", context=TRIALSCOUT)
    assert payloads(events) == [] and events[-1].data["payload"]["message"] == "Try:"


def test_trialscout_context_reaches_the_model(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    trials = [{"nct_id": f"NCT{i:08d}", "title": f"Study {i}", "phase": ["PHASE2"], "status": "RECRUITING",
               "enrollment": 40} for i in range(25)]
    context = {**TRIALSCOUT, "condition": "melanoma", "phase": ["PHASE2"], "status": ["RECRUITING"],
               "total_matched": 480, "loaded_count": 25, "trials": trials, "selected_nct_ids": ["NCT00000003"],
               "sort": {"field": "enrollment", "direction": "desc"}, "pagination": {"page": 2, "page_size": 25},
               "viewer": {"nct_id": "NCT00000004"},
               "ai_columns": [{"name": "Allows Brain Mets", "type": "boolean", "filter_active": True,
                               "counts": {"yes": 4, "no": 9, "unknown": 12}}]}
    fake_llm.script(Script.text("ok"))
    chat(alice, "what do you see?", context=context)
    seen = page_context_of(fake_llm.requests[0])
    for expected in ("Condition: melanoma", "Phase: PHASE2", "Results: 25 loaded of 480 total",
                     "Sorted by: enrollment desc", "Page: 2", "Selected: NCT00000003",
                     "Detail view open: NCT00000004", "Allows Brain Mets (boolean) [filter ON",
                     "yes=4, no=9, unknown=12", "LOADED TRIALS (20 of 25 listed)", "NCT00000019",
                     "Holding pen: the page has 25 trials loaded"):
        assert expected in seen, expected
    assert "NCT00000020" not in seen


def test_demo_says_which_stream_instructions_are_active(demo: TestClient, db: Database) -> None:
    from backend.db.models import ResearchStream
    with db.session() as s:
        stream = ResearchStream(name="EGFR-resistant NSCLC", chat_instructions="- Name the EGFR mutation.\n- Be brief.",
                                archived=False)
        s.add(stream)
        s.flush()
        stream_id = stream.id
    events = chat(demo, "what is love", context={**TABLIZER, "stream_id": stream_id})
    assert events[0].data["stream"]["name"] == "EGFR-resistant NSCLC"
    assert "research stream “EGFR-resistant NSCLC”; its instructions are active (e.g. “Name the EGFR mutation.”)" \
        in events[-1].data["payload"]["message"]


@pytest.mark.parametrize("page", ["trialscout", "tablizer"])
def test_the_accepted_cards_result_count_reaches_the_model(alice: TestClient, fake_llm: FakeAnthropic,
                                                           page: str) -> None:
    """After Accept the page sends `last_accepted`; the next turn's page context carries it as one JSON line
    (the shape the demo model parses), and the system prompt says what it means."""
    accepted = {"type": "pubmed_query_suggestion", "query": "EGFR AND osimertinib", "result_count": 2,
                "previous_query": "lung cancer", "previous_result_count": 24}
    fake_llm.script(Script.text("ok"), Script.text("ok"))
    chat(alice, "what changed?", context={"current_page": page, "last_accepted": accepted})
    seen = page_context_of(fake_llm.requests[0])
    line = next(x for x in seen.splitlines() if x.startswith("- Last accepted card: "))
    assert json.loads(line.split(": ", 1)[1]) == accepted
    system = fake_llm.requests[0]["system"][0]["text"]
    assert "Last accepted card" in system
    chat(alice, "and now?", context={"current_page": page})
    assert "Last accepted card" not in page_context_of(fake_llm.requests[1])
