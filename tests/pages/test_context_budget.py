"""The page context budget, through the chat endpoint: whatever a page sends, the system prompt the
model receives keeps its page context within COLLEAGUE_CONTEXT_TOKEN_BUDGET (about 4 characters a
token) and says what it left out; a context too large to store with the message is a 422."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from backend.db.session import Database
from backend.main import create_app
from tests.conftest import make_settings, signed_in_for_test
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.fakes.fake_page import chat, page_context_of

BUDGET_CHARS = 8_000 * 4  # the default budget
WRAPPER = 1_000  # <page_context> tags, the preamble and the holding pen note around the builder's text


def page_context(fake: FakeAnthropic) -> str:
    return page_context_of(fake.requests[-1])


def ask(client: TestClient, fake: FakeAnthropic, context: dict[str, Any]) -> str:
    assert len(json.dumps(context)) < 256_000  # what a request may carry
    fake.script(Script.text("Seen."))
    chat(client, "what do you see?", context=context)
    return page_context(fake)


def test_a_context_too_large_to_store_is_a_clear_422(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    trials = [{"nct_id": f"NCT{i:08d}", "title": f"Trial {i} " + "of a long descriptive title " * 19,
               "phase": ["PHASE3"], "status": "RECRUITING", "enrollment": 300} for i in range(600)]
    context = {"current_page": "trialscout", "trials": trials, "loaded_count": 600}
    # Under the chat route's body cap (1 MB: a larger body is a 413 unread) and over what is stored.
    assert 300_000 < len(json.dumps(context)) < 1_000_000
    r = alice.post("/api/chat/stream", json={"message": "what do you see?", "context": context})
    assert r.status_code == 422, r.text[:300]
    assert r.json()["error"] == "invalid_input" and "256 KB" in json.dumps(r.json()["detail"])
    assert fake_llm.requests == []
    assert alice.get("/api/conversations?app=trialscout").json() == []


def test_trialscout_fits_thousands_of_trials_and_long_fields(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    context = {
        "current_page": "trialscout", "condition": "melanoma " * 4_000, "eligibility_keywords": "brain " * 3_000,
        "phase": ["PHASE2"] * 2_000, "loaded_count": 2_000, "total_matched": 90_000,
        "trials": [{"nct_id": f"NCT{i:08d}", "title": f"Trial {i}"} for i in range(2_000)],
        "ai_columns": [{"name": f"Column {i}", "criteria": "Enrols patients with " + "x" * 150, "type": "boolean"}
                       for i in range(200)],
        "selected_nct_ids": [f"NCT{i:08d}" for i in range(400)],
    }
    text = ask(alice, fake_llm, context)
    assert len(text) < BUDGET_CHARS + WRAPPER
    for note in ("- Condition: melanoma melanoma", "more characters not shown]", "(+1,980 more)",
                 "LOADED TRIALS (20 of 2000 listed)", "[1,980 more trials not shown: use get_staged_items]",
                 "AI COLUMNS: 200", "more AI columns not shown]", "[370 more not shown]"):
        assert note in text, note


def test_tablizer_fits_a_huge_query_and_many_snapshots(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    context = {
        "current_page": "tablizer", "query": "(egfr OR " * 10_000 + "osimertinib)", "loaded_count": 1_000,
        "snapshots": [{"id": i, "label": f"Snapshot {i}", "query": "egfr " * 30, "count": 40} for i in range(400)],
        "articles": [{"pmid": str(10_000_000 + i), "title": f"Article {i}"} for i in range(1_000)],
    }
    text = ask(alice, fake_llm, context)
    assert len(text) < BUDGET_CHARS + WRAPPER
    for note in ("- Query: (egfr OR (egfr OR", "more characters not shown]", "SNAPSHOTS: 400 saved searches",
                 "more snapshots not shown]", "[980 more articles not shown: use get_staged_items]"):
        assert note in text, note


@pytest.mark.parametrize("page", ["edit_research_stream", "a_page_nobody_registered"])
def test_other_pages_fit_the_budget(alice: TestClient, fake_llm: FakeAnthropic, page: str) -> None:
    big = "z" * 30_000
    context = {"current_page": page if page != "a_page_nobody_registered" else page + big,
               "stream": {"name": big}, "active_tab": big, "current_schema": {"fields": [big]},
               "retrieval": big, "workbench": big, "chat_instructions_draft": big, "notes": big}
    text = ask(alice, fake_llm, context)
    assert len(text) < BUDGET_CHARS + WRAPPER
    assert "more characters not shown]" in text


@pytest.fixture
def small_budget(db_url: str, db: Database, fake_llm: FakeAnthropic) -> Iterator[TestClient]:
    app = create_app(make_settings(db_url, ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=fake_llm.url,
                                   COLLEAGUE_CONTEXT_TOKEN_BUDGET=1_000))
    yield from signed_in_for_test(app, db, "sam")


def test_the_budget_is_a_setting(small_budget: TestClient, fake_llm: FakeAnthropic) -> None:
    trials = [{"nct_id": f"NCT{i:08d}", "title": f"A randomised phase 3 trial of drug {i} in advanced melanoma",
               "phase": ["PHASE3"], "status": "RECRUITING", "enrollment": 400} for i in range(40)]
    text = ask(small_budget, fake_llm, {"current_page": "trialscout", "condition": "melanoma", "trials": trials,
                                        "loaded_count": 40})
    assert len(text) < 1_000 * 4 + WRAPPER
    listed = [line for line in text.splitlines() if line.startswith("- NCT")]
    assert 0 < len(listed) < 20
    assert f"LOADED TRIALS ({len(listed)} of 40 listed)" in text
    assert f"[{40 - len(listed)} more trials not shown: use get_staged_items]" in text
