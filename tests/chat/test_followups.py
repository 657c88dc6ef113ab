"""Follow-up chips fit the conversation: never the question just answered, never another disease than the
one the user works on. The filter over many conversations, then through the chat route with the demo model
(whose page chips are generic starters and questions about the loaded rows)."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from backend.agent.schemas import SuggestedValue
from backend.chat.followups import diseases, relevant
from tests.fakes.fake_page import chat


def chip(value: str, label: str = "") -> SuggestedValue:
    return SuggestedValue(label=label or value[:20], value=value)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def values(chips: list[SuggestedValue]) -> list[str]:
    return [c.value for c in chips]


CHIPS = [chip("Find Phase 3 immunotherapy trials for NSCLC"), chip("Find trials for triple-negative breast cancer"),
         chip("What's the most common phase among these?"), chip("Which of these are recruiting in Europe?")]


@pytest.mark.parametrize(("history", "page", "kept"), [
    # the page's search names the disease; the user's question names none
    ([user("What's the most common phase among these?")], {"condition": "melanoma"},
     ["Which of these are recruiting in Europe?"]),
    # the user names it; an abbreviation of another disease and a long name of another are both dropped
    ([user("Find recruiting trials for metastatic uveal melanoma")], {},
     ["What's the most common phase among these?", "Which of these are recruiting in Europe?"]),
    # lung cancer covers its kinds: NSCLC stays, breast cancer goes
    ([user("Show phase 2 lung cancer studies")], {"condition": ""},
     ["Find Phase 3 immunotherapy trials for NSCLC", "What's the most common phase among these?",
      "Which of these are recruiting in Europe?"]),
    # a PubMed query on the Tablizer page sets the topic
    ([user("summarise these")], {"query": '"Breast Neoplasms"[MeSH] AND "triple negative breast cancer"[tiab]'},
     ["Find trials for triple-negative breast cancer", "What's the most common phase among these?",
      "Which of these are recruiting in Europe?"]),
    # an earlier turn named the disease; the question just answered repeats a chip with other case and punctuation
    ([user("Find trials for type 2 diabetes"), {"role": "assistant", "content": "Found 40."},
      user("which of these are RECRUITING in europe")], {},
     ["What's the most common phase among these?"]),
    # no disease anywhere: starters about diseases are fine
    ([user("hello")], {}, values(CHIPS)),
])
def test_chips_fit_the_conversation(history: list[dict[str, Any]], page: dict[str, Any], kept: list[str]) -> None:
    assert values(relevant(CHIPS, history, page, "Here you are.")) == kept


def test_the_page_context_and_tool_results_in_a_user_message_are_not_the_users_words() -> None:
    sent = {"role": "user", "content": [
        {"type": "text", "text": '<page_context page="trialscout">Condition: breast cancer</page_context>'},
        {"type": "text", "text": "What's the most common phase among these?"}]}
    tool = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "NSCLC trials"}]}
    kept = relevant(CHIPS, [sent, {"role": "assistant", "content": "…"}, tool], {"condition": "melanoma"}, "")
    assert values(kept) == ["Which of these are recruiting in Europe?"]


def test_without_a_topic_from_the_user_the_answer_sets_it() -> None:
    kept = relevant(CHIPS, [user("what is this page?")], {}, "These are trials of small cell lung cancer.")
    assert values(kept) == ["What's the most common phase among these?", "Which of these are recruiting in Europe?"]


def test_duplicate_and_empty_chips_are_dropped() -> None:
    chips = [chip("Broaden my search"), chip("broaden my search!"), chip("  ?  ")]
    assert values(relevant(chips, [user("hi")], {}, "")) == ["Broaden my search"]


@pytest.mark.parametrize(("text", "found"), [
    ("breast cancer and lung cancer trials", {"breast cancer", "lung cancer"}),
    ("hepatocellular carcinoma vs RCC", {"hepatocellular carcinoma", "renal cell carcinoma"}),
    ("Crohn's disease, heart failure and muscular dystrophies", {"crohn s disease", "heart failure",
                                                                 "muscular dystrophy"}),
    ("a diagnosis of her disease, the prognosis and the analysis", set()),
    ("COVID-19 vaccines in glioblastoma", {"covid 19", "glioblastoma"}),
])
def test_diseases_are_found_by_their_shape(text: str, found: set[str]) -> None:
    assert diseases(text) == found


def test_a_disease_as_an_eligibility_criterion_or_an_adverse_event_is_on_topic() -> None:
    chips = [chip("Add a column: does the trial exclude autoimmune disease?"),
             chip("Which trials allow a history of HIV?"), chip("How often was colitis or pneumonitis reported?"),
             chip("Find trials for multiple myeloma")]
    kept = relevant(chips, [user("Find melanoma trials with checkpoint inhibitors")], {}, "")
    assert values(kept) == values(chips[:3])


def test_non_small_cell_is_not_small_cell() -> None:
    kept = relevant([chip("Find trials for small cell lung cancer")], [user("NSCLC trials please")], {}, "")
    assert kept == []


# ---- through the chat route with the demo model ------------------------------------------------------------

MELANOMA_FORM = {"current_page": "trialscout", "condition": "melanoma", "intervention": "", "sponsor": "",
                 "phase": [], "status": [], "location": "", "ai_columns": []}
TRIALS = [
    {"nct_id": "NCT00000201", "title": "Drug A in melanoma", "phase": ["PHASE3"], "status": "RECRUITING",
     "enrollment": 300},
    {"nct_id": "NCT00000202", "title": "Drug B in melanoma", "phase": ["PHASE2"], "status": "RECRUITING",
     "enrollment": 80},
]


def chips_of(events: list[Any]) -> list[str]:
    assert events[-1].event == "complete", [e.event for e in events]
    return [c["value"] for c in events[-1].data["payload"]["suggested_values"]]


def test_a_melanoma_search_is_offered_no_other_disease(demo: TestClient) -> None:
    offered = chips_of(chat(demo, "Find recruiting trials for melanoma", context=MELANOMA_FORM))
    assert offered and not any(diseases(v) - {"melanoma"} for v in offered), offered


def test_the_question_just_answered_is_not_offered_again(demo: TestClient) -> None:
    context = {**MELANOMA_FORM, "trials": TRIALS, "total_matched": 2, "loaded_count": 2}
    question = "What's the most common phase among these?"
    offered = chips_of(chat(demo, question, context=context))
    assert offered and question not in offered, offered
