"""Every log line of a turn is one JSON object with the turn's ids and its trace id, and none holds what
the user wrote, the page's context or the answer (at DEBUG too: the SDK's own debug lines included)."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from backend.config import Settings
from backend.db.session import Database
from backend.main import create_app
from backend.observability.logs import CONTENT_LOGGERS, handler, uvicorn_log_config
from tests.conftest import signed_in
from tests.fakes.anthropic_server import FakeAnthropic, Script, tool_reply
from tests.fakes.fake_page import CONTEXT, chat
from tests.sse import types

pytestmark = pytest.mark.usefixtures("test_registry")
QUESTION = "My patient, born 1961, has EGFR T790M after osimertinib; which trials fit?"
ANSWER = "Two trials look relevant to this history."


@pytest.fixture
def lines() -> Iterator[io.StringIO]:
    """The root logger at DEBUG with our JSON handler, and the levels `serve` gives the content loggers."""
    assert uvicorn_log_config("json", "DEBUG")["loggers"]["sse_starlette"] == {"level": "WARNING"}
    stream = io.StringIO()
    root = logging.getLogger()
    h, level = handler(stream), root.level
    before = {name: logging.getLogger(name).level for name in CONTENT_LOGGERS}
    root.addHandler(h)
    root.setLevel(logging.DEBUG)
    for name, quiet in CONTENT_LOGGERS.items():
        logging.getLogger(name).setLevel(quiet)
    yield stream
    root.removeHandler(h)
    root.setLevel(level)
    for name, was in before.items():
        logging.getLogger(name).setLevel(was)


def test_a_turns_log_lines_are_json_with_its_ids_and_no_content(
        settings: Settings, db: Database, fake_llm: FakeAnthropic, spans: InMemorySpanExporter,
        lines: io.StringIO) -> None:
    app = create_app(settings)
    client = signed_in(app, db, "alice")
    fake_llm.script(Script.answer(tool_reply("lookup", {"q": "EGFR T790M"})), Script.text(ANSWER))
    lines.seek(0)
    lines.truncate()
    events = chat(client, QUESTION, context={**CONTEXT, "query": "EGFR T790M 1961"})
    client.__exit__(None, None, None)
    FastAPIInstrumentor.uninstrument_app(app)
    assert types(events)[-1] == "complete"
    opened = events[0].data

    records = [json.loads(line) for line in lines.getvalue().splitlines()]  # each line parses on its own
    turn_lines = [r for r in records if r.get("turn_id") == opened["turn_id"]]
    said = {r["event"] for r in turn_lines}
    assert {"turn started", "model call ended", "tool call ended", "turn ended"} <= said
    [turn_span] = [s for s in spans.get_finished_spans() if s.name == "invoke_agent Colleague"]
    for record in turn_lines:
        assert record["conversation_id"] == opened["conversation_id"]
        assert record["user_id"] > 0 and len(record["request_id"]) == 16
        assert record["trace_id"] == format(turn_span.context.trace_id, "032x")
        assert record["timestamp"] and record["level"]
    [ended] = [r for r in turn_lines if r["event"] == "turn ended"]
    assert ended["outcome"] == "completed" and ended["time_to_first_chunk"] is not None

    everything = lines.getvalue()
    for content in (QUESTION, "T790M", "1961", ANSWER, "Let me check", "Found 2 items"):
        assert content not in everything, content
