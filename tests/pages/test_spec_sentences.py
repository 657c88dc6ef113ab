"""Every example sentence of the spec documents, tried as a new user would: offline (no key, the demo model
behind the real SDK and the real chat route), on a page that holds what the sentence needs. Each gets a
useful answer of the right kind: a card the page can Accept, an answer computed from the loaded rows, or a
guided next step whose actions the page has. None dead-ends.

The list is the spec's sentences (chat-system-architecture.md, tablizer-trialscout-chat-integration.md) and
the stream editor's own starter prompts; a new one is a line in SENTENCES."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from backend.db.session import Database
from backend.main import create_app
from backend.registry import REGISTRY
from tests.conftest import make_settings, signed_in
from tests.fakes.fake_page import chat

TRIALS = [
    {"nct_id": f"NCT0600010{i}", "title": title, "phase": phase, "status": status, "enrollment": n}
    for i, (title, phase, status, n) in enumerate([
        ("Pembrolizumab Plus Chemotherapy in Stage IV NSCLC", ["PHASE3"], "RECRUITING", 620),
        ("Nivolumab After Chemoradiation", ["PHASE2"], "RECRUITING", 120),
        ("Osimertinib in EGFR-Mutant NSCLC", ["PHASE3"], "ACTIVE_NOT_RECRUITING", 556),
        ("Exercise During Chemotherapy", ["NA"], "RECRUITING", 60),
        ("Durvalumab Consolidation", ["PHASE3"], "RECRUITING", 1040),
    ])
]
TRIALSCOUT = {"current_page": "trialscout", "condition": "non-small cell lung cancer", "intervention": "",
              "sponsor": "", "phase": [], "status": ["RECRUITING"], "location": "", "sex": "ALL",
              "eligibility_keywords": "", "total_matched": 412, "loaded_count": 5, "ai_columns": [], "trials": TRIALS}
ARTICLES = [{"pmid": f"3100000{i}", "title": t, "journal": j, "year": y} for i, (t, j, y) in enumerate([
    ("Mechanisms of Acquired Resistance to Osimertinib", "Lancet Oncol", 2021),
    ("Liquid Biopsy for EGFR Mutation Detection", "J Clin Oncol", 2023),
    ("Durvalumab after Chemoradiotherapy", "N Engl J Med", 2017),
    ("Circulating Tumor DNA Monitoring", "J Clin Oncol", 2024),
], start=1)]
TABLIZER = {"current_page": "tablizer", "query": "EGFR AND lung cancer", "total_matched": 480, "loaded_count": 4,
            "snapshots": [], "ai_columns": [], "articles": ARTICLES}
TABLIZER_EMPTY = {"current_page": "tablizer", "query": "", "total_matched": 0, "loaded_count": 0, "articles": []}
TRIALSCOUT_EMPTY = {**TRIALSCOUT, "condition": "", "status": [], "total_matched": None, "loaded_count": 0, "trials": []}
FEW = {**TABLIZER, "date_start": "2024-01-01", "date_end": "2024-02-01", "total_matched": 4}
FILTERED = {**TRIALSCOUT, "trials": [t for t in TRIALS if t["phase"] == ["PHASE3"]], "shown_count": 3,
            "filters": [{"label": "Phase: Phase 3", "field": "phase", "op": "equals", "value": "PHASE3",
                         "scope": "rows"}]}
EDITOR = {"current_page": "edit_research_stream", "active_tab": "semantic", "stream": {"name": "EGFR resistance"},
          "current_schema": {"name": "EGFR resistance", "description": "EGFR TKIs"},
          "chat_instructions_draft": "Give good answers about relevant things."}

# (sentence, page state, what a useful answer is: a card's type, "rows" (computed from the loaded rows:
# the answer must say each of `says`), or "actions" (a guided step: actions the page has))
SENTENCES: list[tuple[str, dict[str, Any], str, tuple[str, ...]]] = [
    ("I want to find EGFR resistance articles", TABLIZER_EMPTY, "pubmed_query_suggestion", ()),
    ("Find EGFR resistance articles in lung cancer", TABLIZER_EMPTY, "pubmed_query_suggestion", ()),
    ("Find Phase 3 immunotherapy trials for NSCLC", TRIALSCOUT_EMPTY, "trial_search_suggestion", ()),
    ("What's the most common phase among these?", TRIALSCOUT, "rows", ("Phase 3", "3 of 5")),
    ("I only want trials that allow brain metastases", TRIALSCOUT, "ai_column_suggestion", ()),
    ("Add a column for the primary endpoint", TRIALSCOUT, "ai_column_suggestion", ()),
    ("I want to filter to only Phase 3", TRIALSCOUT, "filter_suggestion", ()),
    ("Which trials have OS as primary endpoint?", TRIALSCOUT, "ai_column_suggestion", ()),
    ("What patterns do you see?", TRIALSCOUT, "rows", ("Phase 3", "2,396")),
    ("What patterns do you see?", TABLIZER, "rows", ("J Clin Oncol",)),
    ("Am I missing relevant articles?", TABLIZER, "pubmed_query_suggestion", ("snapshot",)),
    ("How do I compare searches?", TABLIZER, "actions", ("snapshot",)),
    ("Why did I get so few results?", FEW, "rows", ("2024-01-01",)),
    ("Why did I get so few results?", FILTERED, "rows", ("Phase: Phase 3", "2 of the 5")),
    ("Show me more results", TRIALSCOUT, "actions", ()),
    ("Suggest chat instructions for this stream", EDITOR, "chat_instructions_suggestion", ()),
    ("What would make these instructions clearer?", EDITOR, "chat_instructions_suggestion", ("Vague",)),
    ("Check my stream definition for problems", EDITOR, "validation_results", ()),
]
DEAD_ENDS = ("beyond what I can do", "no prepared answer", "can't help", "cannot help")


@pytest.fixture
def demo_admin(db_url: str, db: Database) -> Iterator[TestClient]:
    client = signed_in(create_app(make_settings(db_url)), db, "dora", role="admin")
    yield client
    client.__exit__(None, None, None)


@pytest.mark.parametrize(("sentence", "context", "kind", "says"), SENTENCES,
                         ids=[f"{c['current_page']}:{s}" for s, c, _, _ in SENTENCES])
def test_every_spec_sentence_gets_a_useful_answer(demo_admin: TestClient, sentence: str, context: dict[str, Any],
                                                  kind: str, says: tuple[str, ...]) -> None:
    events = chat(demo_admin, sentence, context=context)
    assert events[-1].event == "complete", [(e.event, e.data) for e in events]
    done = events[-1].data["payload"]
    message, cards = done["message"], [p["type"] for p in done["payloads"]]
    assert not any(d.lower() in message.lower() for d in DEAD_ENDS), message
    page_actions = [a.action for a in REGISTRY.pages[context["current_page"]].client_actions]
    for action in done["suggested_actions"]:  # a guided step only offers what the page can do
        assert action["action"] in page_actions, action
    if kind == "rows":
        assert not cards, cards
    elif kind == "actions":
        assert done["suggested_actions"], message
    else:
        assert kind in cards, (cards, message)
    for word in says:
        assert word.lower() in message.lower(), (word, message)


def test_a_guided_workflow_offers_its_steps(demo_admin: TestClient) -> None:
    """Comparing searches has steps: save a snapshot (an action), then refine or broaden (chips that answer)."""
    done = chat(demo_admin, "How do I compare searches?", context=TABLIZER)[-1].data["payload"]
    assert [a["action"] for a in done["suggested_actions"]] == ["save_snapshot"]
    for chip in done["suggested_values"]:
        followed = chat(demo_admin, chip["value"], context=TABLIZER)[-1].data["payload"]
        assert [p["type"] for p in followed["payloads"]] == ["pubmed_query_suggestion"], chip
