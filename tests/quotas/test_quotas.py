"""Per-user quotas over HTTP, with two app instances on one database standing for two workers:
concurrent streams, turns and AI column runs per minute, the daily token budget. Each refusal is a 429
with `Retry-After` and the app's `{error, detail}` body, sent before any stream starts."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime, time, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select
from starlette.testclient import TestClient

from backend.db.base import utcnow
from backend.db.models import Conversation, DailyUsage, User
from backend.db.session import Database
from backend.demo.wire import Reply
from backend.main import create_app
from tests.conftest import make_settings, signed_in
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.fakes.fake_page import CONTEXT
from tests.sse import Event, parse_lines

pytestmark = pytest.mark.usefixtures("test_registry")

TURN = {"message": "hello", "context": CONTEXT}


class Workers:
    """App instances on one database, each a worker process in production. Every signed-in user gets
    two of their own (an app's SDK client belongs to the event loop of the one TestClient using it)."""

    def __init__(self, db_url: str, fake: FakeAnthropic, db: Database, **limits: Any) -> None:
        self.settings = make_settings(db_url, ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=fake.url, **limits)
        self.db = db
        self.clients: list[TestClient] = []

    def sign_in(self, username: str) -> tuple[TestClient, TestClient]:
        first_app, second_app = create_app(self.settings), create_app(self.settings)
        for app in (first_app, second_app):
            app.state.chat.poll_seconds = 0.05
        first = signed_in(first_app, self.db, username)
        second = TestClient(second_app, cookies=first.cookies)
        second.__enter__()
        self.clients += [first, second]
        return first, second

    def close(self) -> None:
        for client in self.clients:
            client.__exit__(None, None, None)


@pytest.fixture
def workers(db_url: str, fake_llm: FakeAnthropic, db: Database) -> Iterator[Any]:
    made: list[Workers] = []

    def make(**limits: Any) -> Workers:
        made.append(Workers(db_url, fake_llm, db, **limits))
        return made[-1]

    yield make
    for w in made:
        w.close()


def assert_refused(r: Any, *phrases: str) -> int:
    assert r.status_code == 429, r.text
    body = r.json()
    assert body["error"] == "too_many_requests"
    for phrase in phrases:
        assert phrase in body["detail"], body["detail"]
    retry_after = int(r.headers["retry-after"])
    assert retry_after >= 1
    return retry_after


def open_turn(client: TestClient, stack: ExitStack) -> tuple[int, Iterator[Event]]:
    """Start a turn and read it until the model is writing; returns its conversation and the rest."""
    r = stack.enter_context(client.stream("POST", "/api/chat/stream", json=TURN))
    assert r.status_code == 200
    events = parse_lines(r.iter_lines())
    conv_id = next(events).data["conversation_id"]
    assert next(e for e in events if e.event == "text_delta")
    return conv_id, events


def test_a_stream_over_the_cap_is_refused_across_workers(workers: Any, fake_llm: FakeAnthropic) -> None:
    w = workers(COLLEAGUE_MAX_CONCURRENT_STREAMS=2)
    alice_1, alice_2 = w.sign_in("alice")
    bob, _ = w.sign_in("bob")
    fake_llm.script(Script.slow("A. "), Script.slow("B. "), Script.text("Bob is not limited by Alice."))
    with ExitStack() as stack:
        first, first_events = open_turn(alice_1, stack)
        second, second_events = open_turn(alice_2, stack)  # the other worker: the count is in the database

        assert_refused(alice_1.post("/api/chat/stream", json=TURN), "2 answers being written", "2 at once")
        assert len(fake_llm.requests) == 2  # the refused turn never reached the model
        r = bob.post("/api/chat/stream", json=TURN)
        assert r.status_code == 200 and "Bob is not limited" in r.text

        assert alice_2.post(f"/api/conversations/{first}/stop").json() == {"stopped": True}
        assert [e.event for e in first_events][-1] == "complete"  # saved: its lease is released
        fake_llm.script(Script.text("A slot was free again."))
        r = alice_2.post("/api/chat/stream", json=TURN)
        assert r.status_code == 200 and "A slot was free again." in r.text

        assert alice_1.post(f"/api/conversations/{second}/stop").json() == {"stopped": True}
        assert [e.event for e in second_events][-1] == "complete"


def test_simultaneous_sends_cannot_pass_the_stream_cap_together(workers: Any, fake_llm: FakeAnthropic) -> None:
    """Eight sends released at the same moment on two workers, with a cap of 2: at most two turns run,
    the rest are 429 before any byte (counted before the claim, in another transaction, all of them ran)."""
    w = workers(COLLEAGUE_MAX_CONCURRENT_STREAMS=2)
    alice_1, alice_2 = w.sign_in("alice")
    fake_llm.default = Script.slow("Still writing. ")
    start = threading.Barrier(8)
    statuses: list[int] = []

    def send(client: TestClient) -> None:
        start.wait(timeout=10)
        with client.stream("POST", "/api/chat/stream", json=TURN) as r:
            statuses.append(r.status_code)  # a turn admitted goes on without its reader (durable)

    threads = [threading.Thread(target=send, args=(c,)) for c in [alice_1, alice_2] * 4]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert sorted(statuses) == [200, 200] + [429] * 6, statuses
    with w.db.session() as s:  # a refused send left no conversation behind
        assert s.scalar(select(func.count()).select_from(Conversation)) == 2


def test_turns_over_the_rate_are_refused_before_the_model(workers: Any, fake_llm: FakeAnthropic) -> None:
    w = workers(COLLEAGUE_TURNS_PER_MINUTE=3)
    alice_1, alice_2 = w.sign_in("alice")
    bob, _ = w.sign_in("bob")
    fake_llm.default = Script.text("Answered.")
    for client in (alice_1, alice_2, alice_1):  # the window is shared by both workers
        assert client.post("/api/chat/stream", json=TURN).status_code == 200
    retry_after = assert_refused(alice_2.post("/api/chat/stream", json=TURN), "at most 3 a minute")
    assert retry_after <= 61
    assert len(fake_llm.requests) == 3
    assert bob.post("/api/chat/stream", json=TURN).status_code == 200


def test_ai_column_runs_over_the_rate_are_refused(workers: Any, fake_llm: FakeAnthropic) -> None:
    w = workers(COLLEAGUE_AI_COLUMN_RUNS_PER_MINUTE=2)
    alice_1, alice_2 = w.sign_in("alice")
    bob, _ = w.sign_in("bob")
    fake_llm.default = Script.text('{"answer": "yes", "reasoning": "It says so.", "evidence": []}')
    run = {"column": {"name": "Docetaxel arm", "criteria": "The trial has a docetaxel arm", "type": "boolean"},
           "app": "trialscout", "ids": ["NCT06382129"]}
    assert alice_1.post("/api/ai-columns/evaluate", json=run).status_code == 200
    assert alice_2.post("/api/ai-columns/evaluate", json=run).status_code == 200
    assert_refused(alice_1.post("/api/ai-columns/evaluate", json=run), "Too many AI column runs", "2 a minute")
    assert bob.post("/api/ai-columns/evaluate", json=run).status_code == 200
    # chat turns have their own window
    fake_llm.default = Script.text("Still chatting.")
    assert alice_1.post("/api/chat/stream", json=TURN).status_code == 200


def seconds_to_midnight() -> float:
    midnight = datetime.combine(utcnow().date() + timedelta(days=1), time.min, tzinfo=UTC)
    return (midnight - datetime.now(UTC)).total_seconds()


def test_a_spent_daily_budget_refuses_the_next_turn(workers: Any, fake_llm: FakeAnthropic, db: Database) -> None:
    w = workers(COLLEAGUE_DAILY_TOKEN_BUDGET=10_000)
    alice_1, alice_2 = w.sign_in("alice")
    big = Reply.text("A long, expensive answer.")
    big.input_tokens, big.output_tokens = 9_000, 1_500
    fake_llm.script(Script.answer(big))
    r = alice_1.post("/api/chat/stream", json=TURN)
    assert r.status_code == 200
    conv_id = next(parse_lines(r.text.splitlines())).data["conversation_id"]
    assert alice_1.delete(f"/api/conversations/{conv_id}").status_code == 204  # deleting gives nothing back

    refused = alice_2.post("/api/chat/stream", json=TURN)
    retry_after = assert_refused(refused, "today's token budget (10,500 of 10,000 tokens)", "resets at 00:00 UTC")
    assert abs(retry_after - seconds_to_midnight()) < 5
    assert len(fake_llm.requests) == 1

    bob, carol = w.sign_in("bob")[0], w.sign_in("carol")[0]
    with db.session() as s:  # yesterday's usage does not count; today's, however it got there, does
        yesterday = utcnow().date() - timedelta(days=1)
        s.add(DailyUsage(user_id=user_id(db, "bob"), day=yesterday, turns=50, input_tokens=10**9, output_tokens=0,
                         cache_creation_input_tokens=0, cache_read_input_tokens=0))
        s.add(DailyUsage(user_id=user_id(db, "carol"), day=utcnow().date(), turns=3, input_tokens=4_000,
                         output_tokens=1_000, cache_creation_input_tokens=2_000, cache_read_input_tokens=3_000))
    fake_llm.script(Script.text("Fresh day."))
    r = bob.post("/api/chat/stream", json=TURN)
    assert r.status_code == 200 and "Fresh day." in r.text
    assert_refused(carol.post("/api/chat/stream", json=TURN), "(10,000 of 10,000 tokens)")


def user_id(db: Database, username: str) -> int:
    with db.session() as s:
        return s.query(User).filter_by(username=username).one().id


def test_usage_of_saved_turns_is_counted_per_day(workers: Any, fake_llm: FakeAnthropic, db: Database) -> None:
    w = workers()
    alice, _ = w.sign_in("alice")
    for tokens in (1_000, 2_000):
        reply = Reply.text("Counted.")
        reply.input_tokens, reply.output_tokens = tokens, 10
        fake_llm.script(Script.answer(reply))
        assert alice.post("/api/chat/stream", json=TURN).status_code == 200
    with db.session() as s:
        [row] = s.query(DailyUsage).all()
        assert (row.day, row.turns, row.input_tokens, row.output_tokens) == (utcnow().date(), 2, 3_000, 20)


VERDICT = '{"answer": "yes", "reasoning": "It says so.", "evidence": []}'
TRIALS = ["NCT00000102", "NCT00000104", "NCT00000105"]


def column_run(ids: list[str], criteria: str = "The trial has a docetaxel arm") -> dict[str, Any]:
    return {"column": {"name": "Docetaxel arm", "criteria": criteria, "type": "boolean"}, "app": "trialscout",
            "ids": ids}


def test_ai_column_rows_are_spent_from_the_daily_budget(workers: Any, fake_llm: FakeAnthropic, db: Database) -> None:
    """Each row's model call counts in the day's tokens (not as a turn); a spent budget refuses the next run and
    the next turn before any model call."""
    w = workers(COLLEAGUE_DAILY_TOKEN_BUDGET=10_000)
    alice, _ = w.sign_in("alice")
    costly = Reply.text(VERDICT)
    costly.input_tokens, costly.output_tokens = 3_000, 500
    fake_llm.default = Script.answer(costly)
    r = alice.post("/api/ai-columns/evaluate", json=column_run(TRIALS))
    assert r.status_code == 200 and '"type": "complete"' in r.text.replace('"type":"complete"', '"type": "complete"')
    assert len(fake_llm.requests) == 3
    with db.session() as s:
        [row] = s.query(DailyUsage).all()
        assert (row.turns, row.input_tokens, row.output_tokens) == (0, 9_000, 1_500)

    assert_refused(alice.post("/api/ai-columns/evaluate", json=column_run(TRIALS, "Another criterion")),
                   "today's token budget (10,500 of 10,000 tokens)")
    assert_refused(alice.post("/api/chat/stream", json=TURN), "today's token budget")
    assert len(fake_llm.requests) == 3


def test_ai_column_rows_a_minute_are_limited(workers: Any, fake_llm: FakeAnthropic) -> None:
    w = workers(COLLEAGUE_AI_COLUMN_ROWS_PER_MINUTE=4)
    alice_1, alice_2 = w.sign_in("alice")
    fake_llm.default = Script.text(VERDICT)
    assert alice_1.post("/api/ai-columns/evaluate", json=column_run(TRIALS)).status_code == 200
    assert_refused(alice_2.post("/api/ai-columns/evaluate", json=column_run(TRIALS[:2], "Other")),
                   "Too many AI column rows", "at most 4 a minute (2 asked)")
    assert alice_2.post("/api/ai-columns/evaluate", json=column_run(TRIALS[:1], "Other")).status_code == 200


def test_ai_column_runs_at_once_are_capped(workers: Any, fake_llm: FakeAnthropic) -> None:
    w = workers(COLLEAGUE_MAX_CONCURRENT_AI_COLUMN_RUNS=1)
    alice, _ = w.sign_in("alice")
    bob, _ = w.sign_in("bob")
    fake_llm.script(Script.answer(Reply.text(VERDICT), delay=1.0))
    fake_llm.default = Script.text(VERDICT)
    with alice.stream("POST", "/api/ai-columns/evaluate", json=column_run(TRIALS[:1])) as running:
        assert running.status_code == 200
        events = parse_lines(running.iter_lines())
        assert next(events).event == "progress"  # the run has started: its model call is pending
        assert_refused(alice.post("/api/ai-columns/evaluate", json=column_run(TRIALS[1:2], "Other")),
                       "1 AI columns running", "1 at once")
        assert bob.post("/api/ai-columns/evaluate", json=column_run(TRIALS[1:2], "Other")).status_code == 200
        assert [e.event for e in events][-1] == "complete"
    r = alice.post("/api/ai-columns/evaluate", json=column_run(TRIALS[1:2], "Other"))
    assert r.status_code == 200
