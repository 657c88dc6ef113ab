"""The span tree of a turn with one tool call, as an in-memory exporter sees it: the GenAI conventions'
names and attributes, and no content unless COLLEAGUE_OTEL_CAPTURE_CONTENT says so."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from backend.config import Settings
from backend.db.session import Database
from backend.main import create_app
from tests.conftest import signed_in
from tests.fakes.anthropic_server import FakeAnthropic, Script, tool_reply
from tests.fakes.fake_page import chat
from tests.sse import types

pytestmark = pytest.mark.usefixtures("test_registry")
QUESTION = "Which trials of osimertinib enrol my patient with the T790M mutation?"
ANSWER = "Two trials match the criteria you gave."


def run_turn(settings: Settings, db: Database, fake: FakeAnthropic, capture: bool, sql: bool = False
             ) -> tuple[Any, list[Any]]:
    app = create_app(settings.model_copy(update={"otel_capture_content": capture, "otel_sql": sql}))
    client = signed_in(app, db, "alice")
    fake.script(Script.answer(tool_reply("lookup", {"q": "osimertinib T790M"})), Script.text(ANSWER))
    events = chat(client, QUESTION)
    client.__exit__(None, None, None)
    FastAPIInstrumentor.uninstrument_app(app)
    return app, events


def by_name(spans: list[ReadableSpan]) -> dict[str, list[ReadableSpan]]:
    found: dict[str, list[ReadableSpan]] = {}
    for span in spans:
        found.setdefault(span.name, []).append(span)
    return found


def test_a_turn_with_a_tool_call_is_a_genai_span_tree_without_content(
        settings: Settings, db: Database, fake_llm: FakeAnthropic, spans: InMemorySpanExporter) -> None:
    _app, events = run_turn(settings, db, fake_llm, capture=False, sql=True)
    assert types(events)[-1] == "complete"
    finished = list(spans.get_finished_spans())
    named = by_name(finished)
    model = fake_llm.requests[0]["model"]

    [turn] = named["invoke_agent Colleague"]
    chats = sorted(named[f"chat {model}"], key=lambda s: s.start_time or 0)
    [tool] = named["execute_tool lookup"]
    assert len(chats) == 2
    for child in (*chats, tool):  # each model call and the tool call hang under the turn's span
        assert child.parent is not None and child.parent.span_id == turn.context.span_id
        assert child.context.trace_id == turn.context.trace_id
    [post] = [s for s in finished if s.name == "POST /api/chat/stream"]  # the FastAPI instrumentation's
    assert turn.parent is not None and turn.parent.span_id == post.context.span_id
    assert any(s.attributes and "db.statement" in s.attributes for s in finished)  # COLLEAGUE_OTEL_SQL's

    conversation_id = events[0].data["conversation_id"]
    assert turn.attributes is not None
    assert turn.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert turn.attributes["gen_ai.conversation.id"] == str(conversation_id)
    assert turn.attributes["colleague.turn.id"] == events[0].data["turn_id"]
    assert turn.attributes["colleague.turn.outcome"] == "completed"

    usage = [e.data for e in events if e.event == "usage"]
    for call, stop_reason, billed in zip(chats, ["tool_use", "end_turn"], usage, strict=True):
        attrs = call.attributes or {}
        assert attrs["gen_ai.operation.name"] == "chat"
        assert attrs["gen_ai.provider.name"] == "anthropic"
        assert attrs["gen_ai.request.model"] == model
        assert attrs["gen_ai.response.finish_reasons"] == (stop_reason,)
        assert attrs["gen_ai.usage.output_tokens"] == billed["output_tokens"]
        assert attrs["gen_ai.usage.input_tokens"] == (billed["input_tokens"] + billed["cache_read_input_tokens"]
                                                     + billed["cache_creation_input_tokens"])
        assert attrs["gen_ai.usage.cache_read.input_tokens"] == billed["cache_read_input_tokens"]
        assert str(attrs["gen_ai.response.id"]).startswith("msg_")
    tool_use = fake_llm.requests[1]["messages"][-2]["content"][-1]
    assert (tool.attributes or {})["gen_ai.tool.call.id"] == tool_use["id"]
    assert (tool.attributes or {})["gen_ai.tool.name"] == "lookup"

    everything = json.dumps([dict(s.attributes or {}) for s in finished], default=str)
    for content in (QUESTION, "T790M", ANSWER, "Found 2 items", "Let me check"):
        assert content not in everything
    assert "gen_ai.input.messages" not in everything and "gen_ai.tool.call.arguments" not in everything


def test_content_is_recorded_only_when_the_setting_says_so(
        settings: Settings, db: Database, fake_llm: FakeAnthropic, spans: InMemorySpanExporter) -> None:
    run_turn(settings, db, fake_llm, capture=True)
    finished = list(spans.get_finished_spans())
    assert not any(s.attributes and "db.statement" in s.attributes for s in finished)  # COLLEAGUE_OTEL_SQL off
    named = by_name(finished)
    model = fake_llm.requests[0]["model"]
    first = min(named[f"chat {model}"], key=lambda s: s.start_time or 0)
    assert QUESTION in str((first.attributes or {})["gen_ai.input.messages"])
    [tool] = named["execute_tool lookup"]
    assert "T790M" in str((tool.attributes or {})["gen_ai.tool.call.arguments"])
