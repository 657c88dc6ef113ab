"""What one worker's metrics count, read as the deltas a test's own requests made: a turn's model calls,
tokens and tool call; a failed and a refused turn; AI column rows."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import REGISTRY
from starlette.testclient import TestClient

from backend.config import Settings
from backend.db.session import Database
from backend.main import create_app
from tests.ai_columns.test_evaluate import BOOLEAN, TRIALS, URL, verdict
from tests.conftest import signed_in
from tests.fakes.anthropic_server import FakeAnthropic, Script, tool_reply
from tests.fakes.fake_page import chat
from tests.sse import types

pytestmark = pytest.mark.usefixtures("test_registry")


class Counts:
    """Samples of the default registry; `delta` is what changed since this was made."""

    def __init__(self) -> None:
        self.before = self.read()

    @staticmethod
    def read() -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        return {(s.name, tuple(sorted(s.labels.items()))): s.value
                for family in REGISTRY.collect() for s in family.samples}

    def delta(self, name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return self.read().get(key, 0.0) - self.before.get(key, 0.0)


def test_a_turn_with_a_tool_call(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    counts = Counts()
    fake_llm.script(Script.answer(tool_reply("lookup", {"q": "egfr"})), Script.text("Two found."))
    events = chat(alice, "look it up")
    assert types(events)[-1] == "complete"
    model = fake_llm.requests[0]["model"]
    usage = [e.data for e in events if e.event == "usage"]

    assert counts.delta("colleague_turns_started_total") == 1
    assert counts.delta("colleague_turns_ended_total", outcome="completed", error="") == 1
    assert counts.delta("colleague_model_call_duration_seconds_count", model=model, outcome="ok") == 2
    assert counts.delta("colleague_tool_call_duration_seconds_count", tool="lookup", outcome="ok") == 1
    for kind, key in (("output", "output_tokens"), ("cache_read", "cache_read_input_tokens"),
                      ("cache_write", "cache_creation_input_tokens")):
        assert counts.delta("colleague_model_tokens_total", model=model, type=kind) == sum(u[key] for u in usage)
    assert counts.delta("colleague_model_cost_usd_total", model=model) > 0
    assert counts.delta("colleague_http_requests_total", method="POST", route="/api/chat/stream",
                        status="200") == 1
    assert counts.delta("colleague_turns_running") == 0  # back down when the turn ended
    assert counts.delta("colleague_stream_readers", where="local") == 0


def test_a_failed_turn_and_a_refused_one(settings: Settings, db: Database, fake_llm: FakeAnthropic) -> None:
    app: Any = create_app(settings.model_copy(update={"turns_per_minute": 1}))
    client = signed_in(app, db, "alice")
    counts = Counts()
    fake_llm.script(Script.http_error(400, "invalid_request_error"))
    assert types(chat(client, "first"))[-1] == "error"
    refused = client.post("/api/chat/stream", json={"message": "second", "context": {}})
    assert refused.status_code == 429
    client.__exit__(None, None, None)
    assert counts.delta("colleague_turns_ended_total", outcome="errored", error="invalid_request_error") == 1
    assert counts.delta("colleague_quota_refusals_total", limit="chat-turns") == 1
    assert counts.delta("colleague_http_requests_total", method="POST", route="/api/chat/stream",
                        status="429") == 1


def test_ai_column_rows_are_counted(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    counts = Counts()
    fake_llm.default = Script.text(verdict("yes"))
    r = alice.post(URL, json={"column": BOOLEAN, "app": "trialscout", "ids": TRIALS})
    assert r.status_code == 200
    assert counts.delta("colleague_ai_column_rows_total", outcome="evaluated") == len(TRIALS)
