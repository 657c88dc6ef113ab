"""The demo model tells a question about the product ("how does this page work?", "what does this column
mean?") from a request for trials or articles. The request is built as a chat turn builds it (the page's
context builder, its system prompt and tools); the product questions get an answer from what the request
says about the page, never a search card or a tool call, and the real requests, many phrased as "how
does … work", still get the card, tool or computed answer they got before."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from backend.chat.markers import SUGGESTED_VALUES
from tests.demo.turn import cards, demo_turn, prose

TRIALS = [
    {"nct_id": f"NCT0700010{i}", "title": title, "phase": phase, "status": status, "enrollment": n}
    for i, (title, phase, status, n) in enumerate(
        [
            ("Pembrolizumab Plus Chemotherapy in Stage IV NSCLC", ["PHASE3"], "RECRUITING", 620),
            ("Nivolumab After Chemoradiation", ["PHASE2"], "RECRUITING", 120),
            ("Osimertinib in EGFR-Mutant NSCLC", ["PHASE3"], "ACTIVE_NOT_RECRUITING", 556),
            ("Exercise During Chemotherapy", ["NA"], "RECRUITING", 60),
        ]
    )
]
ARTICLES = [
    {"pmid": f"3200000{i}", "title": t, "journal": j, "year": y}
    for i, (t, j, y) in enumerate(
        [
            ("Mechanisms of Acquired Resistance to Osimertinib", "Lancet Oncol", 2021),
            ("Liquid Biopsy for EGFR Mutation Detection", "J Clin Oncol", 2023),
            ("Durvalumab after Chemoradiotherapy", "N Engl J Med", 2017),
        ]
    )
]
PAGES: dict[str, dict[str, Any]] = {
    "trials": {
        "current_page": "trialscout",
        "condition": "non-small cell lung cancer",
        "status": ["RECRUITING"],
        "total_matched": 412,
        "loaded_count": 4,
        "ai_columns": [],
        "trials": TRIALS,
    },
    "no_trials": {"current_page": "trialscout"},
    "filtered": {
        "current_page": "trialscout",
        "condition": "melanoma",
        "total_matched": 90,
        "loaded_count": 4,
        "shown_count": 2,
        "trials": TRIALS,
        "filters": [{"field": "phase", "op": "equals", "value": "PHASE3", "label": "Phase: Phase 3"}],
        "ai_columns": [
            {
                "name": "Allows brain mets",
                "criteria": "Does the trial allow brain metastases?",
                "type": "boolean",
                "verdicts": {"NCT07000100": "Yes"},
            }
        ],
    },
    "screened": {
        "current_page": "trialscout",
        "condition": "breast cancer",
        "total_matched": 4,
        "loaded_count": 4,
        "trials": TRIALS,
        "screening": {
            "patient_id": 7,
            "label": "Case 7",
            "screening_id": 3,
            "status": "complete",
            "shortlist": [
                {
                    "nct_id": "NCT07000100",
                    "title": "Pembrolizumab Plus Chemotherapy",
                    "verdict": "ELIGIBLE",
                    "score": 0.9,
                    "met": 5,
                    "not_met": 0,
                    "unknown": 1,
                }
            ],
        },
    },
    "articles": {
        "current_page": "tablizer",
        "query": "lung cancer",
        "total_matched": 900,
        "loaded_count": 3,
        "articles": ARTICLES,
    },
    "no_articles": {"current_page": "tablizer"},
}

# Questions about the product: what the page, its cards, columns, filters, tools or the assistant are for.
PRODUCT = [
    ("trials", "How does this page work?"),
    ("no_trials", "what can you do here?"),
    ("trials", "how do I add a column?"),
    ("screened", "What does the Fit column mean?"),
    ("no_trials", "How do I use TrialScout?"),
    ("trials", "What is an AI column?"),
    ("trials", "how do i filter the table"),
    ("trials", "what do the cards you suggest do?"),
    ("trials", "Which tools do you have access to?"),
    ("trials", "Can you explain how this works?"),
    ("trials", "what happens when I click Accept on a card?"),
    ("trials", "What do the status values mean?"),
    ("trials", "explain the phase column to me"),
    ("no_trials", "how am I supposed to use you"),
    ("trials", "what's the n= number next to each trial?"),
    ("no_trials", "How do I run a search here?"),
    ("no_trials", "What kinds of things can I ask you?"),
    ("trials", "how does the AI column feature work"),
    ("no_trials", "how do I get started?"),
    ("trials", "what are the filters for"),
    ("articles", "How does this page work?"),
    ("articles", "what does the journal column show"),
    ("no_articles", "how do I build a query here?"),
    ("articles", "What can you do in Tablizer?"),
    ("articles", "what are the cards you can offer me"),
    ("filtered", "how do I remove a filter?"),
    ("trials", "what's the difference between the search form and the table filters?"),
    ("articles", "how do i add an AI column here"),
    ("trials", "Is there a help page for this tool?"),
    ("no_trials", "what is this tool and how do I use it"),
    ("filtered", "what does the Allows brain mets column mean?"),
    ("screened", "how does this page work?"),
    ("articles", "What does Dismiss do?"),
]
# Real requests, several phrased like product questions: each keeps its card, tool or computed answer.
REAL = [
    ("no_trials", "how does pembrolizumab work in melanoma trials", "card:trial_search_suggestion"),
    ("no_trials", "find trials testing nivolumab in melanoma", "card:trial_search_suggestion"),
    ("no_trials", "Find phase 3 trials for breast cancer", "card:trial_search_suggestion"),
    ("no_trials", "what trials work on CAR-T for lymphoma", "card:trial_search_suggestion"),
    ("trials", "Add a column for the primary endpoint", "card:ai_column_suggestion"),
    ("trials", "add a column that flags trials allowing brain metastases", "card:ai_column_suggestion"),
    ("trials", "only show phase 3 trials", "card:filter_suggestion"),
    ("trials", "broaden my search", "card:trial_search_suggestion"),
    ("trials", "tell me about NCT07000101", "tool:get_trial"),
    ("trials", "show me the phase breakdown", "tool:get_result_stats"),
    ("trials", "What's the most common phase among these?", "says:Phase 3"),
    ("trials", "which trial has the largest enrollment?", "says:NCT07000100"),
    ("trials", "how many of these are recruiting?", "says:3"),
    ("no_articles", "How do I find papers on EGFR resistance?", "card:pubmed_query_suggestion"),
    ("articles", "narrow it to randomized controlled trials", "card:pubmed_query_suggestion"),
    ("articles", "Which journal published the most of these?", "says:J Clin Oncol"),
    ("articles", "search pubmed for osimertinib resistance", "card:pubmed_query_suggestion"),
]


def turn(page: str, message: str) -> tuple[str, list[str]]:
    """The demo model's answer to one message sent on a page: (text, tools called)."""
    return demo_turn(PAGES[page], message)


def test_the_evaluation_list_is_varied() -> None:
    assert len(PRODUCT) + len(REAL) >= 30 and len({m.lower() for _, m in PRODUCT}) >= 30
    assert {p for p, _ in PRODUCT} == set(PAGES) and {PAGES[p]["current_page"] for p, _, _ in REAL} == {
        "trialscout",
        "tablizer",
    }


@pytest.mark.parametrize(("page", "message"), PRODUCT, ids=[f"{p}:{m}" for p, m in PRODUCT])
def test_a_question_about_the_product_is_answered_not_searched(page: str, message: str) -> None:
    text, tools = turn(page, message)
    assert tools == [] and cards(text) == set(), (tools, text[:200])
    said = prose(text)
    assert "no prepared answer" not in said and "beyond what I can do" not in said
    assert SUGGESTED_VALUES in text  # chips that work on this page
    # It answers from this page: the names it gives are the request's own cards, fields, tools or state.
    assert re.search(r"\bcards?\b|\bcolumns?\b|\bfilter|`\w+`|\bfields?\b", said), said


@pytest.mark.parametrize(("page", "message", "expect"), REAL, ids=[f"{p}:{m}" for p, m, _ in REAL])
def test_a_real_request_is_not_taken_for_a_product_question(page: str, message: str, expect: str) -> None:
    text, tools = turn(page, message)
    kind, _, what = expect.partition(":")
    if kind == "card":
        assert what in cards(text), text[:300]
    elif kind == "tool":
        assert what in tools, (tools, text[:300])
    else:
        assert what in prose(text), text[:300]


def test_the_answer_is_the_pages_own() -> None:
    """Tablizer's overview names its cards and tools, not TrialScout's; a column is explained from the page
    (an AI column by its criteria, a field by the values the prompt lists), and an unknown one isn't guessed."""
    tablizer = prose(turn("articles", "How does this page work?")[0])
    assert "PubMed query" in tablizer and "`get_pubmed_article`" in tablizer and "Trial search" not in tablizer
    trialscout = prose(turn("trials", "How does this page work?")[0])
    assert "Trial search" in trialscout and "`get_trial`" in trialscout and "4 loaded of 412" in trialscout
    mine = prose(turn("filtered", "what does the Allows brain mets column mean?")[0])
    assert "Does the trial allow brain metastases?" in mine
    phase = prose(turn("trials", "explain the phase column to me")[0])
    assert "PHASE3" in phase and "EARLY_PHASE1" in phase
    unknown = prose(turn("trials", "what does the Fit column mean?")[0])
    assert "won't guess" in unknown and "Fit" in unknown
    tools = prose(turn("articles", "Which tools do you have access to?")[0])
    assert all(f"`{t}`" in tools for t in ("search_pubmed", "get_pubmed_article", "get_staged_items"))


def test_the_screening_page_explains_its_verdicts_not_the_patient() -> None:
    """With a patient's screening loaded, a column question points to the verdicts the page sent, and the
    overview lists the screening tools the page offers then."""
    fit = prose(turn("screened", "What does the Fit column mean?")[0])
    assert "doesn't name a column “Fit”" in fit  # a name the request never gives is not explained as known
    assert "verdict" in fit and "score 0.90" in fit  # but the screening the page sent is
    assert "score 0.90" in prose(turn("screened", "what do the verdicts and scores mean?")[0])
    overview = turn("screened", "how does this page work?")[0]
    assert "`get_screening_trial`" in overview and "Case 7" not in json.dumps(overview)
