"""What the assistant sees of AI columns: every row's verdict, not only counts, within the page context
budget, through the chat endpoint (the system prompt the fake Messages API receives)."""

from __future__ import annotations

import json
from typing import Any

from starlette.testclient import TestClient

from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.fakes.fake_page import chat, page_context_of

BUDGET_CHARS = 8_000 * 4


def seen(client: TestClient, fake: FakeAnthropic, context: dict[str, Any]) -> str:
    fake.script(Script.text("Seen."))
    chat(client, "which trials scored Yes?", context=context)
    return page_context_of(fake.requests[-1])


def trials(n: int) -> list[dict[str, Any]]:
    return [{"nct_id": f"NCT{i:08d}", "title": f"Trial {i}"} for i in range(n)]


def test_boolean_verdicts_list_the_rows_under_each_answer(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    verdicts = {f"NCT{i:08d}": ("yes" if i in (2, 5, 7) else "no" if i % 2 else "unknown") for i in range(12)}
    context = {"current_page": "trialscout", "trials": trials(12), "loaded_count": 12, "ai_columns": [
        {"name": "Adults only", "type": "boolean", "criteria": "Enrols adults only", "filter": None,
         "counts": {"yes": 3, "no": 4, "unknown": 5}, "verdicts": verdicts},
        {"name": "Dose", "type": "text", "criteria": "What dose?", "verdicts": {"NCT00000002": "10 mg daily",
                                                                              "NCT00000005": "Unknown"}}]}
    text = seen(alice, fake_llm, context)
    assert "- Adults only (boolean): Enrols adults only counts yes=3, no=4, unknown=5" in text
    assert "  yes (3): NCT00000002, NCT00000005, NCT00000007\n" in text
    assert "  no (4): NCT00000001, NCT00000003, NCT00000009, NCT00000011\n" in text
    assert "  unknown (5): NCT00000000, NCT00000004, NCT00000006, NCT00000008, NCT00000010\n" in text
    assert "  NCT00000002: 10 mg daily\n  NCT00000005: Unknown" in text


def test_tablizer_columns_carry_verdicts_too(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    context = {"current_page": "tablizer", "query": "egfr", "articles": [{"pmid": "123", "title": "A"}],
               "loaded_count": 1, "ai_columns": [{"name": "RCT", "type": "boolean", "criteria": "Is it an RCT?",
                                                  "verdicts": {"123": "yes"}}]}
    assert "  yes (1): 123" in seen(alice, fake_llm, context)


def test_many_verdicts_stay_within_the_budget_and_say_what_was_left_out(
        alice: TestClient, fake_llm: FakeAnthropic) -> None:
    many = {f"NCT{i:08d}": "yes" if i % 3 else "no" for i in range(500)}
    answers = {f"NCT{i:08d}": "a long answer " * 20 for i in range(500)}
    context = {"current_page": "trialscout", "trials": trials(500), "loaded_count": 500, "ai_columns": [
        {"name": "Eligible", "type": "boolean", "criteria": "x", "verdicts": many},
        {"name": "Why", "type": "text", "criteria": "y", "verdicts": answers}]}
    assert len(json.dumps(context)) < 256_000
    text = seen(alice, fake_llm, context)
    assert len(text) < BUDGET_CHARS + 1_000
    ai = text[text.index("AI COLUMNS: 2"):text.index("LOADED TRIALS")]
    assert len(ai) < BUDGET_CHARS // 4 + 400
    assert "  yes (333): NCT00000001, NCT00000002, NCT00000004" in ai and "more]" in ai
    assert "  no (167): NCT00000000, NCT00000003" in ai
    assert "  NCT00000000: a long answer" in ai and "more answers not shown]" in ai
