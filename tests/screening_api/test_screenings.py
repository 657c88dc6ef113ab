"""Screenings over HTTP on both databases: the SSE sequence and its stored rows, a reload, Stop, a client
that leaves, a second screening while one runs, missing trials, an unreachable source, and the quotas."""

from __future__ import annotations

import asyncio
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from starlette.testclient import TestClient

from backend.db.base import utcnow
from backend.db.models import DailyUsage
from backend.db.session import Database
from backend.main import create_app
from backend.sources import Sources
from backend.sources.clinical_trials import ClinicalTrialsService
from backend.sources.throttle import RetryPolicy
from tests.conftest import make_settings, signed_in
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.screening_api.conftest import (
    NO_CRITERIA,
    TRIALS,
    VANISHED,
    ScriptedModel,
    counts,
    create_patient,
    kinds,
    screen,
    user_id,
)
from tests.sse import parse_lines


def test_screen_these_trials_streams_and_stores_each(alice: TestClient, model: ScriptedModel, db: Database) -> None:
    pid = create_patient(alice)["id"]
    model.answers["exclusion"] = "yes"  # every exclusion applies: the patient is excluded
    r, events = screen(alice, pid, nct_ids=[*TRIALS, NO_CRITERIA])

    assert r.headers["content-type"].startswith("text/event-stream")
    assert r.headers["cache-control"] == "no-cache" and r.headers["x-accel-buffering"] == "no"
    assert kinds(events) == ["profile", "candidates", "trial", "trial", "trial", "trial", "complete"]
    assert [e.id for e in events] == [str(i) for i in range(1, 8)]
    assert all(e.data["type"] == e.event for e in events)
    sid = events[0].data["screening_id"]
    assert r.headers["location"] == f"/api/screenings/{sid}"
    assert events[0].data["patient_id"] == pid
    assert [c["nct_id"] for c in events[1].data["candidates"]] == [*TRIALS, NO_CRITERIA]

    trials = {e.data["trial"]["nct_id"]: e.data["trial"] for e in events if e.event == "trial"}
    for nct in TRIALS:
        labels = {(c["criterion"]["kind"], c["label"]) for c in trials[nct]["criteria"]}
        assert ("exclusion", "NOT_MET") in labels  # "yes, the patient has it" is NOT_MET from her side
        assert trials[nct]["verdict"] == "EXCLUDED"
    assert trials[NO_CRITERIA]["verdict"] == "UNCERTAIN" and trials[NO_CRITERIA]["criteria"] == []
    assert trials[NO_CRITERIA]["reason"]
    assert len(model.judged) == 3  # one model call per trial with criteria, none for the empty one

    done = events[-1].data
    assert done["status"] == "complete" and sorted(done["ranking"]) == sorted([*TRIALS, NO_CRITERIA])
    usage = done["usage"]
    assert usage["output_tokens"] == 3 * 40 and usage["input_tokens"] + usage["cache_read_input_tokens"] >= 3 * 300
    assert usage["estimated_cost_usd"] > 0

    stored = alice.get(f"/api/screenings/{sid}").json()
    assert stored["status"] == "complete" and stored["trials_screened"] == 4 and stored["last_event_id"] == 7
    assert [t["nct_id"] for t in stored["trials"]] == done["ranking"]
    assert stored["usage"] == usage
    assert {t["nct_id"]: t for t in stored["trials"]} == trials
    with db.session() as s:
        rows = s.execute(sa.text("SELECT count(*) FROM screening_criteria")).scalar_one()
        day = s.get(DailyUsage, (user_id(db, "alice"), utcnow().date()))
    assert rows == sum(len(t["criteria"]) for t in trials.values()) > 0
    assert day is not None and day.turns == 1 and day.output_tokens >= 3 * 40  # the day's budget counts it

    listed = alice.get(f"/api/patients/{pid}/screenings").json()
    assert [(s["id"], s["status"], s["trials_screened"]) for s in listed] == [(sid, "complete", 4)]


def test_a_reload_replays_the_same_events(alice: TestClient, model: ScriptedModel) -> None:
    pid = create_patient(alice)["id"]
    _, events = screen(alice, pid, nct_ids=TRIALS)
    sid = events[0].data["screening_id"]
    replay = list(parse_lines(alice.get(f"/api/screenings/{sid}/stream").iter_lines()))
    assert [(e.id, e.event, e.data) for e in replay] == [(e.id, e.event, e.data) for e in events]
    after = list(parse_lines(alice.get(f"/api/screenings/{sid}/stream", headers={"Last-Event-ID": "3"}).iter_lines()))
    assert [e.id for e in after] == [e.id for e in events[3:]]
    at_end = alice.get(f"/api/screenings/{sid}/stream", headers={"Last-Event-ID": events[-1].id})
    assert at_end.status_code == 200 and list(parse_lines(at_end.iter_lines())) == []


def test_judgements_are_cached_per_note_version(alice: TestClient, model: ScriptedModel, db: Database) -> None:
    patient = create_patient(alice)
    pid = patient["id"]
    _, first = screen(alice, pid, nct_ids=TRIALS[:2])
    assert len(model.judged) == 2
    _, again = screen(alice, pid, nct_ids=TRIALS[:2])
    assert len(model.judged) == 2  # every criterion came from the cache
    criteria = [c for e in again if e.event == "trial" for c in e.data["trial"]["criteria"]]
    assert criteria and all(c["cached"] for c in criteria)
    assert again[-1].data["usage"]["output_tokens"] == 0

    alice.patch(f"/api/patients/{pid}", json={"profile": {**patient["profile"], "age": 61}})
    _, edited = screen(alice, pid, nct_ids=TRIALS[:2])
    assert len(model.judged) == 4  # a new version is judged afresh
    with db.session() as s:
        per_version = dict(s.execute(sa.text("SELECT version_id, count(*) FROM screening_judgements "
                                             "GROUP BY version_id")).all())
    assert set(per_version) == {first[0].data["version_id"], edited[0].data["version_id"]}
    assert len({first[0].data["version_id"], edited[0].data["version_id"]}) == 2


def test_the_demo_model_screens_from_a_search(demo_alice: TestClient, db: Database) -> None:
    pid = create_patient(demo_alice)["id"]
    _, events = screen(demo_alice, pid, n=5)
    assert kinds(events)[:2] == ["profile", "candidates"] and kinds(events)[-1] == "complete"
    candidates = events[1].data["candidates"]
    assert 0 < len(candidates) <= 5 and events[1].data["mode"] == "search"
    trials = [e.data["trial"] for e in events if e.event == "trial"]
    assert len(trials) == len(candidates)
    assert {t["verdict"] for t in trials} <= {"ELIGIBLE", "EXCLUDED", "UNCERTAIN", "NOT_RELEVANT"}
    sid = events[0].data["screening_id"]
    assert demo_alice.get(f"/api/screenings/{sid}").json()["trials_screened"] == len(trials)
    assert counts(db)["screening_trials"] == len(trials)


def test_a_vanished_trial_is_noted_and_the_rest_screened(demo_alice: TestClient) -> None:
    pid = create_patient(demo_alice)["id"]
    _, events = screen(demo_alice, pid, nct_ids=[TRIALS[0], VANISHED, TRIALS[1]])
    assert kinds(events)[-1] == "complete"
    screened = [e.data["trial"]["nct_id"] for e in events if e.event == "trial"]
    assert sorted(screened) == sorted([TRIALS[0], TRIALS[1]])
    noted = events[1].data["missing"] + [e.data["nct_id"] for e in events if e.event == "trial_error"]
    assert VANISHED in noted
    stored = demo_alice.get(f"/api/screenings/{events[0].data['screening_id']}").json()
    assert VANISHED in stored["missing"] + [p["nct_id"] for p in stored["problems"]]


def open_screening(client: TestClient, stack: ExitStack, pid: int, **body: Any) -> tuple[int, Any]:
    """Start a screening and read it up to its candidates; returns its id and the rest of its events."""
    r = stack.enter_context(client.stream("POST", f"/api/patients/{pid}/screenings", json=body))
    assert r.status_code == 200
    events = parse_lines(r.iter_lines())
    first = next(events)
    assert first.event == "profile"
    assert next(events).event == "candidates"
    return int(first.data["screening_id"]), events


def test_stop_keeps_what_was_screened(alice: TestClient, model: ScriptedModel, fake_llm: FakeAnthropic,
                                      db: Database) -> None:
    pid = create_patient(alice)["id"]
    model.judge = Script.stall(hold=10)
    with ExitStack() as stack:
        sid, events = open_screening(alice, stack, pid, nct_ids=[*TRIALS, NO_CRITERIA])
        first = next(events)  # the trial without criteria needs no model
        assert first.event == "trial" and first.data["trial"]["nct_id"] == NO_CRITERIA
        assert alice.get(f"/api/screenings/{sid}").json()["status"] == "running"
        assert alice.get("/api/patients").json()[0]["running_screening_id"] == sid

        assert alice.post(f"/api/screenings/{sid}/stop").json() == {"stopped": True}
        rest = list(events)
    assert kinds(rest) == ["complete"]
    assert rest[0].data["status"] == "stopped" and rest[0].data["ranking"] == [NO_CRITERIA]
    assert fake_llm.disconnected.wait(5)  # the pending model calls were cancelled
    stored = alice.get(f"/api/screenings/{sid}").json()
    assert stored["status"] == "stopped" and [t["nct_id"] for t in stored["trials"]] == [NO_CRITERIA]
    assert alice.post(f"/api/screenings/{sid}/stop").json() == {"stopped": False}
    assert alice.get("/api/patients").json()[0]["running_screening_id"] is None
    with db.session() as s:
        assert s.execute(sa.text("SELECT turns FROM daily_usage")).scalar_one() == 1


def test_a_stopped_screening_has_its_tokens_counted(alice: TestClient, model: ScriptedModel, db: Database) -> None:
    pid = create_patient(alice)["id"]
    with db.session() as s:  # the profile's extraction is on the day's count already
        before = s.get(DailyUsage, (user_id(db, "alice"), utcnow().date()))
        out_before, in_before = (before.output_tokens, before.input_tokens + before.cache_read_input_tokens) \
            if before else (0, 0)
    judge = model.__call__

    def first_answers_then_stall(body: dict[str, Any]) -> Script:
        script = judge(body)
        return script if len(model.judged) == 1 else Script.stall(hold=10)

    model.fake.default = first_answers_then_stall  # type: ignore[assignment]
    with ExitStack() as stack:
        sid, events = open_screening(alice, stack, pid, nct_ids=TRIALS)
        assert next(events).event == "trial"  # one trial judged, the other two calls pending
        running = alice.get(f"/api/screenings/{sid}").json()["usage"]
        assert running["output_tokens"] == 40  # stored as it was spent
        assert alice.post(f"/api/screenings/{sid}/stop").json() == {"stopped": True}
        assert kinds(list(events)) == ["complete"]
    usage = alice.get(f"/api/screenings/{sid}").json()["usage"]
    assert usage["output_tokens"] == 40 and usage["input_tokens"] + usage["cache_read_input_tokens"] == 300
    with db.session() as s:
        day = s.get(DailyUsage, (user_id(db, "alice"), utcnow().date()))
    assert day is not None and day.turns == 1  # charged once, not again at the end
    assert day.output_tokens - out_before == 40 and day.input_tokens + day.cache_read_input_tokens - in_before == 300


def test_a_second_screening_while_one_runs_is_409(alice: TestClient, model: ScriptedModel) -> None:
    pid = create_patient(alice)["id"]
    other = create_patient(alice)["id"]
    model.judge = Script.stall(hold=10)
    with ExitStack() as stack:
        sid, _events = open_screening(alice, stack, pid, nct_ids=TRIALS[:1])
        r = alice.post(f"/api/patients/{pid}/screenings", json={"nct_ids": TRIALS[:1]})
        assert r.status_code == 409 and r.json()["error"] == "conflict"
        assert "already running" in r.json()["detail"]
        assert len(alice.get(f"/api/patients/{pid}/screenings").json()) == 1  # nothing half-made
        model.judge = None
        _, events = screen(alice, other, nct_ids=TRIALS[:1])  # another patient is free
        assert kinds(events)[-1] == "complete"
        assert alice.post(f"/api/screenings/{sid}/stop").json() == {"stopped": True}
    _, events = screen(alice, pid, nct_ids=TRIALS[:1])  # and this one again once it stopped
    assert kinds(events)[-1] == "complete"


def test_a_client_that_leaves_stops_nothing(alice: TestClient, model: ScriptedModel) -> None:
    pid = create_patient(alice)["id"]
    reply_delay = 0.5
    model.judge = None
    judge = model.__call__

    def slow(body: dict[str, Any]) -> Script:
        script = judge(body)
        script.delay = reply_delay if model.judged else 0.0
        return script

    model.fake.default = slow  # type: ignore[assignment]
    with ExitStack() as stack:
        sid, _events = open_screening(alice, stack, pid, nct_ids=TRIALS)
    # the response is closed: the screening goes on, and a reader picks it up again
    replay = list(parse_lines(alice.get(f"/api/screenings/{sid}/stream").iter_lines()))
    assert kinds(replay) == ["profile", "candidates", "trial", "trial", "trial", "complete"]
    assert alice.get(f"/api/screenings/{sid}").json()["status"] == "complete"


def test_an_unreachable_source_is_an_error_event(alice: TestClient, model: ScriptedModel, app: Any) -> None:
    pid = create_patient(alice)["id"]
    requests: list[str] = []

    def ctgov_down(request: httpx.Request) -> httpx.Response:
        requests.append(request.url.path)
        return httpx.Response(503, json={"message": "Service Unavailable"})

    live = ClinicalTrialsService(transport=httpx.MockTransport(ctgov_down), retry=RetryPolicy(max_retries=0))
    app.state.screening.sources = Sources("live", live, app.state.sources.pubmed)
    try:
        _, events = screen(alice, pid, nct_ids=TRIALS)
    finally:
        asyncio.run(live.aclose())
    assert requests  # the live source was asked
    assert kinds(events)[0] == "profile" and kinds(events)[-1] == "error"
    assert events[-1].data["retryable"] is True
    stored = alice.get(f"/api/screenings/{events[0].data['screening_id']}").json()
    assert stored["status"] == "failed" and stored["error"]["code"] == events[-1].data["code"]
    assert alice.get("/api/patients").json()[0]["running_screening_id"] is None


def test_screenings_are_refused_over_the_quotas(db_url: str, fake_llm: FakeAnthropic, db: Database) -> None:
    settings = make_settings(db_url, ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=fake_llm.url,
                             COLLEAGUE_DAILY_TOKEN_BUDGET=10_000, COLLEAGUE_SCREENINGS_PER_MINUTE=2)
    model = ScriptedModel(fake_llm)
    with ExitStack() as stack:
        alice = signed_in(create_app(settings), db, "alice")
        stack.callback(alice.__exit__, None, None, None)
        pid = create_patient(alice)["id"]
        for _ in range(2):
            assert kinds(screen(alice, pid, nct_ids=TRIALS[:1])[1])[-1] == "complete"
        r = alice.post(f"/api/patients/{pid}/screenings", json={"nct_ids": TRIALS[:1]})
        assert r.status_code == 429 and "Too many screenings: at most 2 a minute" in r.json()["detail"]
        assert int(r.headers["retry-after"]) >= 1

        judged = len(model.judged)
        with db.session() as s:
            row = s.get(DailyUsage, (user_id(db, "alice"), utcnow().date()))
            assert row is not None
            row.input_tokens += 10_000
        with pytest.MonkeyPatch.context() as mp:  # a fresh minute: only the budget stands in the way
            mp.setattr(alice.app.state.quotas, "screening_rate", None)  # type: ignore[attr-defined]
            r = alice.post(f"/api/patients/{pid}/screenings", json={"nct_ids": TRIALS[:1]})
            assert r.status_code == 429 and "today's token budget" in r.json()["detail"]
            r = alice.post("/api/patients", json={"note": "0. Another patient, 40 years old."})
            assert r.status_code == 429 and "today's token budget" in r.json()["detail"]
        assert len(model.judged) == judged  # refused before any model call
        assert len(alice.get(f"/api/patients/{pid}/screenings").json()) == 2


def test_running_screenings_are_capped_per_user(db_url: str, fake_llm: FakeAnthropic, db: Database) -> None:
    settings = make_settings(db_url, ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=fake_llm.url,
                             COLLEAGUE_MAX_CONCURRENT_STREAMS=1)
    model = ScriptedModel(fake_llm)
    with ExitStack() as stack:
        app = create_app(settings)
        alice, bob = signed_in(app, db, "alice"), signed_in(app, db, "bob")
        for client in (alice, bob):
            stack.callback(client.__exit__, None, None, None)
        first, second, theirs = create_patient(alice)["id"], create_patient(alice)["id"], create_patient(bob)["id"]
        model.judge = Script.stall(hold=10)
        sid, _events = open_screening(alice, stack, first, nct_ids=TRIALS[:1])
        r = alice.post(f"/api/patients/{second}/screenings", json={"nct_ids": TRIALS[:1]})
        assert r.status_code == 429 and "1 screenings running (the limit is 1 at once)" in r.json()["detail"]
        model.judge = None
        assert kinds(screen(bob, theirs, nct_ids=TRIALS[:1])[1])[-1] == "complete"  # per user
        assert alice.post(f"/api/screenings/{sid}/stop").json() == {"stopped": True}
        assert kinds(screen(alice, second, nct_ids=TRIALS[:1])[1])[-1] == "complete"


def test_deleting_a_running_screening_stops_it(alice: TestClient, model: ScriptedModel, db: Database) -> None:
    pid = create_patient(alice)["id"]
    model.judge = Script.stall(hold=10)
    with ExitStack() as stack:
        sid, events = open_screening(alice, stack, pid, nct_ids=TRIALS[:2])
        assert alice.delete(f"/api/screenings/{sid}").status_code == 204
        rest = list(events)
    assert kinds(rest) == ["error"] and rest[0].data["code"] == "deleted"  # its reader is told, not cut off
    assert alice.get(f"/api/screenings/{sid}").status_code == 404
    assert counts(db)["screenings"] == 0 and counts(db)["screening_events"] == 0
    model.judge = None
    assert kinds(screen(alice, pid, nct_ids=TRIALS[:1])[1])[-1] == "complete"  # the patient is free

