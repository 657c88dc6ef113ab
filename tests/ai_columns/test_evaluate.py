"""POST /api/ai-columns/evaluate over HTTP: the SSE events, the model requests, the cache in the database.

The model is the scripted fake Messages API on a real socket (see conftest), answering through the
real `anthropic` SDK; the rows come from the offline corpus.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import sqlalchemy as sa
from starlette.testclient import TestClient

from backend.criteria.prompts import CRITERION_TAG, TEXT_TAG, parse_request
from backend.db.session import Database
from backend.demo.wire import Reply
from backend.errors import UpstreamUnavailable
from backend.main import create_app
from tests.conftest import make_settings, signed_in
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.sse import Event, parse, parse_lines

URL = "/api/ai-columns/evaluate"
TRIALS = ["NCT06382129", "NCT02576665", "NCT06604689"]
MANY = ["NCT05227898", "NCT05801965", "NCT05584540", "NCT06230445", "NCT06136923", "NCT05913115", "NCT03606070",
        "NCT06094296", "NCT02663973", "NCT04871997", "NCT01100827", "NCT06604689", "NCT02576665", "NCT03986528",
        "NCT04571398", "NCT05693090", "NCT05838768", "NCT01998425", "NCT04857008", "NCT05835778"]
BOOLEAN = {"name": "Docetaxel arm", "criteria": "The trial has a docetaxel arm", "type": "boolean"}


def verdict(answer: str, reasoning: str = "Because the record says so.", evidence: tuple[str, ...] = ()) -> str:
    return json.dumps({"answer": answer, "reasoning": reasoning, "evidence": list(evidence)})


def system_of(body: dict[str, Any]) -> str:
    return "".join(b["text"] for b in body["system"])


def parsed(body: dict[str, Any]) -> Any:
    """The evaluator request a body carries (its user content is the cached criterion, then the row)."""
    return parse_request(system_of(body), "".join(b["text"] for b in body["messages"][0]["content"]))


def document_of(body: dict[str, Any]) -> str:
    request = parsed(body)
    assert request is not None, "not an evaluator request"
    return request.document


def by_id(answers: dict[str, Script]) -> Callable[[dict[str, Any]], Script]:
    """A script that answers each request according to the row id its document names."""

    def choose(body: dict[str, Any]) -> Script:
        first_line = document_of(body).split("\n", 1)[0]
        return next(script for item_id, script in answers.items() if item_id in first_line)

    return choose


def run(client: TestClient, ids: list[Any], column: dict[str, Any] | None = None, app: str = "trialscout",
        **extra: Any) -> list[Event]:
    r = client.post(URL, json={"column": column or BOOLEAN, "app": app, "ids": ids, **extra})
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/event-stream")
    events = parse(r.text)
    assert [e.id for e in events] == [str(n) for n in range(1, len(events) + 1)]
    assert all(e.data["type"] == e.event for e in events)
    return events


def rows(events: list[Event]) -> list[Event]:
    return [e for e in events if e.event in ("row", "row_error")]


def check_progress(events: list[Event], total: int) -> None:
    """progress first, then after every row; done climbs by one up to total, and complete agrees."""
    progress = [e.data for e in events if e.event == "progress"]
    assert progress[0] == {"type": "progress", "done": 0, "total": total}
    assert [p["done"] for p in progress] == list(range(total + 1))
    assert all(p["total"] == total for p in progress)
    assert events[-1].event == "complete"
    assert events[-1].data["done"] == events[-1].data["total"] == total
    for before, after in zip(events, events[1:], strict=False):
        if before.event in ("row", "row_error"):
            assert after.event == "progress"


def cached_rows(db: Database) -> list[tuple[str, str | None]]:
    with db.session() as s:
        return [tuple(r) for r in s.execute(sa.text("SELECT item_id, value FROM ai_column_results ORDER BY item_id"))]


def wait_for(condition: Callable[[], Any], timeout: float = 10) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.02)
    raise AssertionError("condition not met in time")


def test_rows_stream_as_they_finish(alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    slow, fast, unsure = TRIALS
    fake_llm.default = by_id({
        slow: Script.answer(Reply.text(verdict("yes", "Docetaxel is the comparator.", ("Docetaxel",))), delay=1.0),
        fast: Script.text(verdict("no")),
        unsure: Script.text(verdict("unknown", "The record does not say.")),
    })
    events = run(alice, TRIALS)

    assert [e.event for e in events] == ["progress"] + ["row", "progress"] * 3 + ["complete"]
    check_progress(events, 3)
    order = [e.data["id"] for e in rows(events)]
    assert set(order[:2]) == {fast, unsure} and order[2] == slow  # not input order: the slow row comes last
    got = {e.data["id"]: e.data for e in rows(events)}
    assert got[slow] == {"type": "row", "id": slow, "value": "MET", "display": "Yes", "cached": False,
                         "reasoning": "Docetaxel is the comparator.", "evidence": ["Docetaxel"],
                         "sections": ["title"], "qualifier": None, "model": "claude-sonnet-4-6", "parse_error": None}
    assert (got[fast]["value"], got[fast]["display"]) == ("NOT_MET", "No")
    assert (got[unsure]["value"], got[unsure]["display"]) == ("UNKNOWN", "Unknown")
    assert events[-1].data == {"type": "complete", "done": 3, "total": 3, "cached": 0, "model": "claude-sonnet-4-6",
                               "counts": {"yes": 1, "no": 1, "conditional": 0, "needs_review": 0,
                                          "unknown": 1, "answered": 0, "error": 0}}

    # One request per row, each with the criterion as written and the trial's record as the document.
    assert len(fake_llm.requests) == 3
    body = next(b for b in fake_llm.requests if slow in document_of(b).split("\n", 1)[0])
    assert system_of(body).split("\n", 1)[0] == CRITERION_TAG
    request = parsed(body)
    assert (request.kind, request.text, request.criterion_type) == ("criterion", BOOLEAN["criteria"], None)
    for needle in ("ClinicalTrials.gov trial record NCT06382129", "Title: A Study Comparing BL-B01D1 With Docetaxel",
                   "Phase: Phase 3", "Conditions: Non-small Cell Lung Cancer", "Interventions: BL-B01D1; Docetaxel",
                   "Sex: All", "Minimum age: 18 Years", "Maximum age: no limit", "Brief summary: This trial",
                   "Eligibility criteria:\nInclusion Criteria:", "2. Age ≥18 years old;"):
        assert needle in request.document
    assert cached_rows(db) == sorted([(slow, "MET"), (fast, "NOT_MET"), (unsure, "UNKNOWN")])


def test_a_second_run_comes_from_the_cache(alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    fake_llm.default = Script.text(verdict("yes", "It does.", ("Docetaxel",)))
    first = run(alice, TRIALS)
    assert len(fake_llm.requests) == 3

    again = run(alice, list(reversed(TRIALS)))
    assert len(fake_llm.requests) == 3  # no new model request
    check_progress(again, 3)
    assert [e.data["id"] for e in rows(again)] == list(reversed(TRIALS))
    assert all(e.data["cached"] for e in rows(again))
    assert {e.data["id"]: {**e.data, "cached": False} for e in rows(again)} == {
        e.data["id"]: e.data for e in rows(first)}
    assert again[-1].data["cached"] == 3 and again[-1].data["counts"] == first[-1].data["counts"]

    # The cache lives in the database: another app (another worker process) reuses it.
    other = create_app(make_settings(db.url, ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=fake_llm.url))
    with TestClient(other) as client:
        client.cookies = alice.cookies
        assert all(e.data["cached"] for e in rows(run(client, TRIALS)))
    assert len(fake_llm.requests) == 3

    # Same text with other spacing is the same column; another criterion or a text column is not.
    run(alice, TRIALS, column={**BOOLEAN, "criteria": "  The trial has a\n docetaxel arm "})
    assert len(fake_llm.requests) == 3
    run(alice, TRIALS[:1], column={**BOOLEAN, "criteria": "The trial is randomized"})
    run(alice, TRIALS[:1], column={**BOOLEAN, "type": "text"})
    assert len(fake_llm.requests) == 5


def test_results_are_cached_per_user(alice: TestClient, bob: TestClient, fake_llm: FakeAnthropic,
                                     db: Database) -> None:
    fake_llm.default = Script.text(verdict("yes", "It does."))
    assert not any(e.data["cached"] for e in rows(run(alice, TRIALS[:2])))
    assert len(fake_llm.requests) == 2

    theirs = run(bob, TRIALS)  # the same column over the same rows (and one more): asked again for bob
    assert [e.data["cached"] for e in rows(theirs)] == [False, False, False] and theirs[-1].data["cached"] == 0
    # (each client runs its own event loop, so the SDK may retry on the other's pooled connection: count rows)
    asked = [document_of(body).split("\n", 1)[0].rsplit(" ", 1)[-1] for body in fake_llm.requests[2:]]
    assert set(asked) == set(TRIALS)

    seen = len(fake_llm.requests)
    mine = run(alice, TRIALS[:2])
    assert all(e.data["cached"] for e in rows(mine)) and len(fake_llm.requests) == seen
    with db.session() as s:  # one cached row per user and trial
        owners = s.execute(sa.text("SELECT u.username, r.item_id FROM ai_column_results r JOIN users u "
                                   "ON u.id = r.user_id ORDER BY u.username, r.item_id")).all()
    assert [tuple(o) for o in owners] == [("alice", t) for t in sorted(TRIALS[:2])] + [
        ("bob", t) for t in sorted(TRIALS)]


def test_an_unknown_trial_is_a_row_error(alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    fake_llm.default = Script.text(verdict("no"))
    events = run(alice, ["NCT09999999", "NCT06382129"])
    check_progress(events, 2)
    failed = next(e for e in events if e.event == "row_error")
    assert failed.data == {"type": "row_error", "id": "NCT09999999", "retryable": False,
                           "message": "NCT09999999 was not found on ClinicalTrials.gov."}
    assert events[-1].data["counts"] == {"yes": 0, "no": 1, "conditional": 0, "needs_review": 0, "unknown": 0,
                                         "answered": 0, "error": 1}
    assert len(fake_llm.requests) == 1
    assert cached_rows(db) == [("NCT06382129", "NOT_MET")]


def test_a_model_error_costs_one_row_and_is_not_cached(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    broken, *fine = TRIALS
    fake_llm.default = by_id({broken: Script.http_error(529, "overloaded_error"),
                              **{i: Script.text(verdict("yes")) for i in fine}})
    events = run(alice, TRIALS)
    check_progress(events, 3)
    failed = next(e for e in events if e.event == "row_error")
    assert failed.data["id"] == broken and failed.data["retryable"] is True
    assert failed.data["message"] == "The model is overloaded right now. Please try again in a moment."
    # a Yes that quotes nothing is not backed by the record
    assert events[-1].data["counts"] == {"yes": 0, "no": 0, "conditional": 0, "needs_review": 2, "unknown": 0,
                                         "answered": 0, "error": 1}

    fake_llm.default = Script.text(verdict("no"))
    again = run(alice, TRIALS)
    assert len(fake_llm.requests) == 4  # only the failed row is asked again
    assert {e.data["id"]: e.data["cached"] for e in rows(again)} == {broken: False, **dict.fromkeys(fine, True)}


def test_a_column_that_cannot_run_ends_with_error(alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    fake_llm.default = Script.http_error(401, "authentication_error")
    events = run(alice, MANY)
    assert [e.event for e in events][0] == "progress" and events[-1].event == "error"
    assert events[-1].data == {"type": "error", "code": "authentication_error", "retryable": False,
                               "message": "The API key was refused; check ANTHROPIC_API_KEY."}
    assert "complete" not in [e.event for e in events]
    assert cached_rows(db) == []


def test_a_spent_account_stops_the_column_and_says_what_to_do(alice: TestClient, fake_llm: FakeAnthropic,
                                                               db: Database) -> None:
    fake_llm.default = Script.http_error(402, "billing_error")
    events = run(alice, MANY)
    assert events[-1].data == {"type": "error", "code": "billing_error", "retryable": False,
                               "message": "The model account's spend limit is reached; an admin must raise it "
                                          "(retrying will not help)."}
    assert "complete" not in [e.event for e in events] and "scripted" not in json.dumps([e.data for e in events])
    assert cached_rows(db) == []


def test_malformed_model_json_is_unknown_with_the_reason(alice: TestClient, fake_llm: FakeAnthropic,
                                                         db: Database) -> None:
    fake_llm.default = Script.text('Yes, it has one. {"answer": "yes", "reasoning": ')
    events = run(alice, TRIALS[:1])
    row = rows(events)[0].data
    assert (row["value"], row["display"]) == ("UNKNOWN", "Unknown")
    assert row["parse_error"].startswith("no JSON object with an 'answer' field in the reply")
    assert row["reasoning"] == f"No verdict: {row['parse_error']}."
    assert events[-1].data["counts"]["unknown"] == 1
    assert cached_rows(db) == []  # an unusable reply is shown, not kept
    run(alice, TRIALS[:1])
    assert len(fake_llm.requests) == 2


def test_text_columns_extract_a_short_answer(alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    column = {"name": "Comparator", "criteria": "What is the comparator arm?", "type": "text"}
    answered, silent = TRIALS[:2]
    fake_llm.default = by_id({
        answered: Script.text(json.dumps({"answer": "Docetaxel", "reasoning": "The title says so.",
                                          "evidence": ["Comparing BL-B01D1 With Docetaxel"]})),
        silent: Script.text(json.dumps({"answer": None, "reasoning": "Not stated.", "evidence": []})),
    })
    events = run(alice, TRIALS[:2], column=column)
    got = {e.data["id"]: e.data for e in rows(events)}
    assert (got[answered]["value"], got[answered]["display"]) == ("Docetaxel", "Docetaxel")
    assert got[answered]["evidence"] == ["Comparing BL-B01D1 With Docetaxel"]
    assert (got[silent]["value"], got[silent]["display"]) == (None, "Unknown")
    assert events[-1].data["counts"] == {"yes": 0, "no": 0, "conditional": 0, "needs_review": 0, "unknown": 1,
                                         "answered": 1, "error": 0}
    request = parsed(fake_llm.requests[0])
    assert system_of(fake_llm.requests[0]).startswith(TEXT_TAG) and request.text == column["criteria"]
    assert cached_rows(db) == sorted([(answered, "Docetaxel"), (silent, None)])
    again = {e.data["id"]: e.data for e in rows(run(alice, TRIALS[:2], column=column))}
    assert again[answered]["display"] == "Docetaxel" and again[silent]["display"] == "Unknown"
    assert all(r["cached"] for r in again.values()) and len(fake_llm.requests) == 2


def test_articles_are_judged_on_title_abstract_and_indexing(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    fake_llm.default = Script.text(verdict("yes", evidence=("Improved survival with MEK inhibition", "Phase III")))
    events = run(alice, [22663011], app="tablizer",
                 column={"name": "RCT", "criteria": "This is a randomized controlled trial", "type": "boolean"})
    row = rows(events)[0].data
    assert (row["id"], row["display"], row["sections"]) == ("22663011", "Yes", ["title", "details"])
    document = document_of(fake_llm.requests[0])
    for needle in ("PubMed article PMID 22663011", "Title: Improved survival with MEK inhibition",
                   "Publication types: Clinical Trial, Phase III;", "MeSH terms: Adult; Aged;", "Abstract:\n"):
        assert needle in document


def test_a_staged_summary_stands_in_for_a_missing_record(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    fake_llm.default = Script.text(verdict("yes", evidence=("A staged trial of docetaxel",)))
    items = [{"nct_id": "nct9999999", "title": "A staged trial of docetaxel", "phase": ["PHASE2"]}]
    events = run(alice, ["NCT09999999"], items=items)
    assert (rows(events)[0].data["display"], rows(events)[0].data["sections"]) == ("Yes", ["title"])
    document = document_of(fake_llm.requests[0])
    assert document.startswith("Summary of ClinicalTrials.gov trial NCT09999999 as listed in the table "
                               "(the full record was not available)")
    assert "Title: A staged trial of docetaxel" in document and "Phase: PHASE2" in document


def test_an_unreachable_source_stops_the_column_unless_rows_are_staged(app: Any, alice: TestClient,
                                                                       fake_llm: FakeAnthropic,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    async def down(_ids: list[str]) -> list[Any]:
        raise UpstreamUnavailable("ClinicalTrials.gov timed out")

    monkeypatch.setattr(app.state.sources.trials, "get_trials_by_nct_ids", down)
    fake_llm.default = Script.text(verdict("yes", evidence=("Staged title",)))
    events = run(alice, TRIALS[:2])
    assert [e.event for e in events] == ["progress", "error"]
    assert events[-1].data == {"type": "error", "code": "source_unavailable", "retryable": True,
                               "message": "The records could not be loaded: ClinicalTrials.gov timed out"}

    events = run(alice, TRIALS[:2], items=[{"nct_id": TRIALS[0], "title": "Staged title"}])
    check_progress(events, 2)
    got = {e.data["id"]: e.data for e in rows(events)}
    assert got[TRIALS[0]]["display"] == "Yes"
    assert got[TRIALS[1]] == {"type": "row_error", "id": TRIALS[1], "retryable": True,
                              "message": "The records could not be loaded: ClinicalTrials.gov timed out"}
    assert len(fake_llm.requests) == 1


def test_client_disconnect_cancels_pending_model_calls(app: Any, alice: TestClient, fake_llm: FakeAnthropic,
                                                       db: Database) -> None:
    fake_llm.default = Script.slow()
    with alice.stream("POST", URL, json={"column": BOOLEAN, "app": "trialscout", "ids": MANY}) as r:
        events = parse_lines(r.iter_lines())  # kept: dropping it would close the response early
        first = next(events)
        assert first.data == {"type": "progress", "done": 0, "total": len(MANY)}
        wait_for(lambda: len(fake_llm.requests) == 8)  # the concurrency limit
    service = app.state.ai_columns
    wait_for(lambda: service.running == 0)  # every task of the column has ended
    wait_for(lambda: fake_llm.disconnects == 8)  # each in-flight model request was hung up
    assert fake_llm.disconnected.is_set()
    assert len(fake_llm.requests) == 8  # and the 12 rows still waiting were never sent
    assert cached_rows(db) == []


def test_concurrency_is_bounded(app: Any, alice: TestClient, fake_llm: FakeAnthropic,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    app.state.settings.ai_column_concurrency = 2
    fake_llm.default = Script.answer(Reply.text(verdict("no")), delay=0.05)
    load = {"now": 0, "most": 0}
    answer = fake_llm._message_json

    async def counted(script: Script) -> AsyncIterator[bytes]:
        load["now"] += 1
        load["most"] = max(load["most"], load["now"])
        try:
            async for chunk in answer(script):
                yield chunk
        finally:
            load["now"] -= 1

    monkeypatch.setattr(fake_llm, "_message_json", counted)
    events = run(alice, MANY[:6])
    assert app.state.ai_columns.concurrency == 2
    check_progress(events, 6)
    assert load["most"] == 2 and len(fake_llm.requests) == 6


def test_the_demo_model_answers_honestly(db_url: str, db: Database) -> None:
    """No key: the built-in demo model, over the offline corpus, decides what it can read and no more."""
    app = create_app(make_settings(db_url))
    client = signed_in(app, db, "dora")
    try:
        events = run(client, ["NCT06382129"], column={"name": "Docetaxel", "criteria": "docetaxel", "type": "boolean"})
        row = rows(events)[0].data
        assert (row["value"], row["display"], row["model"]) == ("MET", "Yes", "colleague-demo-1")
        assert any("With Docetaxel" in quote for quote in row["evidence"])

        events = run(client, ["NCT06382129"],
                     column={"name": "Placebo", "criteria": "Uses a placebo control", "type": "boolean"})
        row = rows(events)[0].data  # the record lists its interventions, and no placebo among them
        assert (row["value"], row["display"], row["evidence"]) == ("NOT_MET", "No", [])

        events = run(client, ["NCT06382129"], column={"name": "DMC", "type": "boolean",
                                                      "criteria": "Has an independent data monitoring committee"})
        row = rows(events)[0].data
        assert (row["value"], row["display"], row["evidence"]) == ("UNKNOWN", "Unknown", [])
        assert row["reasoning"] == ("The record does not mention independent data monitoring committee, and its "
                                    "silence does not decide it.")
        assert events[-1].data["counts"]["unknown"] == 1 and events[-1].data["model"] == "colleague-demo-1"
    finally:
        client.__exit__(None, None, None)


def test_anonymous_is_401(app: Any) -> None:
    with TestClient(app) as client:
        r = client.post(URL, json={"column": BOOLEAN, "app": "trialscout", "ids": TRIALS})
    assert r.status_code == 401 and r.json()["error"] == "unauthorized"


BAD_INPUT: list[tuple[dict[str, Any], list[str], str]] = [
    ({"column": None}, ["body", "column"], "valid dictionary"),
    ({"column": {**BOOLEAN, "type": "number"}}, ["body", "column", "type"], "'boolean' or 'text'"),
    ({"column": {**BOOLEAN, "criteria": "   "}}, ["body", "column", "criteria"], "at least 1 character"),
    ({"column": {**BOOLEAN, "extra": 1}}, ["body", "column", "extra"], "Extra inputs"),
    ({"app": "kh"}, ["body", "app"], "'trialscout' or 'tablizer'"),
    ({"ids": []}, ["body", "ids"], "at least 1 item"),
    ({"ids": [f"NCT{i:08d}" for i in range(1, 502)]}, ["body", "ids"], "at most 500 items"),
    ({"ids": ["NCT06382129", "NCT12X", "22663011"]}, ["body"], "not valid: 'NCT12X', '22663011'"),
    ({"app": "tablizer", "ids": ["22663011", "NCT06382129"]}, ["body"], "identified by PMIDs; not valid"),
    ({"items": [{"nct_id": "NCT02576665"}]}, ["body"], "items[0] must carry a 'nct_id' that is one of ids"),
    ({"items": [{"pmid": "1"}]}, ["body"], "items[0] must carry a 'nct_id'"),
    ({"ids": [22663011]}, ["body"], "identified by NCT ids; not valid: '22663011'"),
    ({"ids": "NCT06382129"}, ["body", "ids"], "valid list"),
]


def test_bad_input_is_422(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    for change, where, says in BAD_INPUT:
        body = {"column": BOOLEAN, "app": "trialscout", "ids": TRIALS[:1], **change}
        r = alice.post(URL, json=body)
        assert r.status_code == 422, (change, r.text)
        assert r.json()["error"] == "invalid_input"
        detail = r.json()["errors"]
        assert any(d["loc"] == where and says in d["msg"] for d in detail), (change, detail)
    assert fake_llm.requests == []
