"""The demo model reads the page: through the real chat route (no key, the demo model behind the real SDK) and
the offline corpus. Refining builds on the page's search, questions about the loaded rows are answered from
them, and a search that found nothing is owned on the next turn with something looser to try."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.fake_page import chat, page_context_of

NSCLC_FORM = {"current_page": "trialscout", "condition": "non-small cell lung cancer", "intervention": "",
              "sponsor": "", "phase": [], "status": ["RECRUITING", "ACTIVE_NOT_RECRUITING"], "location": "",
              "sex": "ALL", "min_age": None, "max_age": None, "eligibility_keywords": "", "ai_columns": []}
TRIALS = [
    {"nct_id": "NCT00000101", "title": "Drug A in stage IV NSCLC", "phase": ["PHASE3"], "status": "RECRUITING",
     "enrollment": 620, "sponsor": "Acme Pharma"},
    {"nct_id": "NCT00000102", "title": "Drug B after chemoradiation", "phase": ["PHASE2"], "status": "RECRUITING",
     "enrollment": 120, "sponsor": "City Hospital"},
    {"nct_id": "NCT00000103", "title": "Drug C consolidation", "phase": ["PHASE3"], "status": "ACTIVE_NOT_RECRUITING",
     "enrollment": 1040, "sponsor": "Acme Pharma"},
    {"nct_id": "NCT00000104", "title": "Exercise during chemotherapy", "phase": ["NA"], "status": "RECRUITING",
     "enrollment": 60},
]
ARTICLES = [
    {"pmid": "100001", "title": "First", "journal": "Lancet Oncol", "year": 2019},
    {"pmid": "100002", "title": "Second", "journal": "J Clin Oncol", "year": 2021},
    {"pmid": "100003", "title": "Third", "journal": "J Clin Oncol", "year": 2023},
    {"pmid": "100004", "title": "Fourth", "journal": "J Clin Oncol", "year": 2020},
    {"pmid": "100005", "title": "Fifth", "journal": "Lancet Oncol", "year": 2018},
]


def answer(events: list[Any]) -> dict[str, Any]:
    done = events[-1]
    assert done.event == "complete", [e.event for e in events]
    payload: dict[str, Any] = done.data["payload"]
    return payload


def card(events: list[Any], kind: str) -> dict[str, Any]:
    [found] = [p["data"] for p in answer(events)["payloads"] if p["type"] == kind]
    return found


def trial_total(client: TestClient, form: dict[str, Any]) -> int:
    params = {k: v for k, v in form.items() if k != "explanation"}
    r = client.get("/api/trials/search", params={**params, "page_size": 5})
    assert r.status_code == 200, r.text
    total: int = r.json()["total_count"]
    return total


def article_total(client: TestClient, query: str) -> int:
    r = client.get("/api/articles/search", params={"q": query})
    assert r.status_code == 200, r.text
    total: int = r.json()["total_count"]
    return total


# ---- refine, narrow, broaden ------------------------------------------------------------------------------

def test_narrowing_keeps_the_form_and_adds_the_filter(demo: TestClient) -> None:
    context = {**NSCLC_FORM, "trials": TRIALS, "total_matched": 400, "loaded_count": 4}
    form = card(chat(demo, "narrow this down to phase 2 or 3", context=context), "trial_search_suggestion")
    assert form["condition"] == "non-small cell lung cancer"
    assert form["status"] == ["RECRUITING", "ACTIVE_NOT_RECRUITING"] and form["phase"] == ["PHASE2", "PHASE3"]
    before = trial_total(demo, {k: NSCLC_FORM[k] for k in ("condition", "status")})
    assert 0 < trial_total(demo, form) < before  # a real narrowing of the page's search


def test_broadening_drops_the_filters_but_not_the_subject(demo: TestClient) -> None:
    context = {**NSCLC_FORM, "intervention": "pembrolizumab", "phase": ["PHASE3"], "sex": "FEMALE",
               "location": "France", "trials": [], "total_matched": 0, "loaded_count": 0}
    form = card(chat(demo, "that's too restrictive, widen it", context=context), "trial_search_suggestion")
    assert (form["condition"], form["intervention"]) == ("non-small cell lung cancer", "pembrolizumab")
    assert not {"phase", "status", "sex", "location"} & set(form)
    assert trial_total(demo, form) > 0


def test_refining_a_pubmed_query_builds_on_it(demo: TestClient) -> None:
    context = {"current_page": "tablizer", "query": "lung cancer", "articles": ARTICLES, "total_matched": 900,
               "loaded_count": 5}
    query = card(chat(demo, "narrow it to randomized controlled trials", context=context),
                 "pubmed_query_suggestion")["query"]
    assert query.startswith("lung cancer AND ") and '"Randomized Controlled Trial"[pt]' in query
    assert 0 < article_total(demo, query) < article_total(demo, "lung cancer")

    improved = card(chat(demo, "can you improve this query?", context=context), "pubmed_query_suggestion")["query"]
    assert '"Lung Neoplasms"[MeSH]' in improved and "improve" not in improved
    assert article_total(demo, improved) >= article_total(demo, "lung cancer")


def test_a_question_about_the_page_itself_is_not_a_search(demo: TestClient) -> None:
    """Words naming the product ("page", "app", "TrialScout") are not a condition to search for."""
    melanoma = {**NSCLC_FORM, "condition": "melanoma", "trials": TRIALS, "total_matched": 301, "loaded_count": 4}
    for question in ("What is this page for?", "What is this app for?", "what's TrialScout for"):
        payloads = answer(chat(demo, question, context=melanoma))["payloads"]
        assert "trial_search_suggestion" not in [p["type"] for p in payloads], question
    # A question how the page works is answered from it (its cards), not searched for "does work".
    done = answer(chat(demo, "How does this page work?", context=melanoma))
    assert [p["type"] for p in done["payloads"]] == [] and "Trial search** card" in done["message"]


# ---- questions about the loaded rows ----------------------------------------------------------------------

def test_a_question_about_loaded_articles_is_answered_from_them(demo: TestClient) -> None:
    context = {"current_page": "tablizer", "query": "lung cancer", "articles": ARTICLES, "total_matched": 900,
               "loaded_count": 5}
    events = chat(demo, "Which journal published the most of these?", context=context)
    assert not [e for e in events if e.event == "tool_start"]  # every row is in the page context
    message = answer(events)["message"]
    assert "most common journal is **J Clin Oncol** (3 of 5)" in message and "Lancet Oncol: 2 of 5" in message
    newest = answer(chat(demo, "what's the newest paper here?", context=context))["message"]
    assert "PMID: 100003" in newest and "2023" in newest


def test_a_question_about_loaded_trials_is_answered_from_them(demo: TestClient) -> None:
    context = {**NSCLC_FORM, "trials": TRIALS, "total_matched": 400, "loaded_count": 4}
    largest = answer(chat(demo, "which trial has the largest enrollment?", context=context))["message"]
    assert "NCT00000103" in largest and "1,040" in largest
    recruiting = answer(chat(demo, "how many of these are recruiting?", context=context))["message"]
    assert "**3** of the 4 loaded trials" in recruiting
    sponsors = answer(chat(demo, "which sponsor runs the most of these trials?", context=context))["message"]
    assert "most common sponsor is **Acme Pharma** (2 of 4)" in sponsors and "not given: 1 of 4" in sponsors
    summary = answer(chat(demo, "summarise these results", context=context))["message"]
    assert "**4** trials loaded of 400" in summary and "Phase 3 2" in summary and "1,840 planned" in summary


# ---- zero results -----------------------------------------------------------------------------------------

def test_a_search_that_found_nothing_is_acknowledged_next_turn(demo: TestClient) -> None:
    empty = {"current_page": "trialscout", "condition": "", "phase": [], "status": [], "trials": [],
             "total_matched": None, "loaded_count": 0, "ai_columns": []}
    first = chat(demo, "find phase 4 melanoma trials in Iceland that are not yet recruiting", context=empty)
    suggested = card(first, "trial_search_suggestion")
    assert trial_total(demo, suggested) == 0  # the suggestion, accepted, finds nothing
    conversation = first[0].data["conversation_id"]
    after = {**empty, **{k: v for k, v in suggested.items() if k != "explanation"}, "total_matched": 0,
             "last_accepted": {"type": "trial_search_suggestion", "query": "melanoma, phase 4, Iceland",
                               "result_count": 0, "previous_query": None, "previous_result_count": None}}
    second = chat(demo, "hmm", context=after, conversation_id=conversation)
    message = answer(second)["message"]
    assert "The search you accepted (melanoma, phase 4, Iceland) found 0 trials." in message
    relaxed = card(second, "trial_search_suggestion")
    assert relaxed["condition"] == "melanoma" and not {"phase", "status", "location"} & set(relaxed)
    assert trial_total(demo, relaxed) > 0


def test_an_empty_pubmed_search_is_owned_without_an_accept_record(demo: TestClient) -> None:
    context = {"current_page": "tablizer", "query": "melanoma[tiab] AND zebrafish[tiab] AND ketogenic[tiab]",
               "articles": [], "total_matched": 0, "loaded_count": 0}
    assert article_total(demo, context["query"]) == 0
    events = chat(demo, "why is the table empty?", context=context)
    assert "found 0 articles" in answer(events)["message"]
    query = card(events, "pubmed_query_suggestion")["query"]
    assert query == "melanoma[tiab] AND zebrafish[tiab]"


def test_the_last_accepted_card_reaches_the_model(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    accepted = {"type": "pubmed_query_suggestion", "query": "x[tiab]", "result_count": 0,
                "previous_query": "y", "previous_result_count": 12}
    chat(alice, "hello", context={"current_page": "tablizer", "query": "x[tiab]", "last_accepted": accepted})
    assert ('- Last accepted card: {"type": "pubmed_query_suggestion", "query": "x[tiab]", "result_count": 0, '
            '"previous_query": "y", "previous_result_count": 12}') in page_context_of(fake_llm.requests[-1])


# ---- no dead ends -----------------------------------------------------------------------------------------

def test_what_the_demo_cannot_do_it_says_and_offers_chips_that_work(demo: TestClient) -> None:
    context = {**NSCLC_FORM, "trials": TRIALS, "total_matched": 400, "loaded_count": 4}
    done = answer(chat(demo, "write me a haiku about this table", context=context))
    assert "no prepared answer" not in done["message"] and "Here is what I can do on this page" in done["message"]
    chips = done["suggested_values"]
    assert len(chips) >= 3
    for chip in chips:  # every chip gets a real answer: a card, or an answer that is not the help again
        followed = answer(chat(demo, chip["value"], context=context))
        assert followed["payloads"] or "Here is what I can do" not in followed["message"], chip
