"""The chat turn through the public API: event sequences, what the model was sent, what the DB holds,
and that the next turn's history passes the fake server's strict pairing validator."""

from __future__ import annotations

import time
from typing import Any

import pytest
from starlette.testclient import TestClient

from backend.db.models import Message
from backend.db.session import Database
from backend.demo.wire import Reply
from tests.fakes.anthropic_server import FakeAnthropic, Script, tool_reply
from tests.fakes.fake_page import CONTEXT, chat, page_context_of
from tests.sse import parse_lines, stream_acting_midway, text_of, types

pytestmark = pytest.mark.usefixtures("test_registry")


def messages(db: Database, conversation_id: int) -> list[Message]:
    with db.session() as s:
        return list(s.query(Message).filter_by(conversation_id=conversation_id).order_by(Message.id))


def follow_up_works(client: TestClient, fake: FakeAnthropic, conversation_id: int) -> dict[str, Any]:
    """Send one more turn; the fake server rejects it (400) if the stored history breaks the API's rules."""
    fake.script(Script.text("Follow-up answer."))
    events = chat(client, "and then?", conversation_id=conversation_id)
    assert types(events)[-1] == "complete", events[-1]
    return fake.requests[-1]


def test_plain_answer(alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    fake_llm.script(Script.text("EGFR is a receptor tyrosine kinase."))
    events = chat(alice, "What is EGFR?")
    assert types(events) == ["conversation", "status", "text_delta", "usage", "context_update", "complete"]
    assert text_of(events) == "EGFR is a receptor tyrosine kinase."
    done = events[-1].data["payload"]
    assert done["status"] == "complete" and done["message"] == "EGFR is a receptor tyrosine kinase."
    conv_id = events[0].data["conversation_id"]
    assert done["conversation_id"] == conv_id
    rows = messages(db, conv_id)
    assert [(m.role, m.status) for m in rows] == [("user", "complete"), ("assistant", "complete")]
    assert rows[0].context == CONTEXT and rows[0].id == events[0].data["user_message_id"]
    assert rows[1].id == done["message_id"]
    sent = fake_llm.requests[0]
    assert sent["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert '<page_context page="test_page">' in page_context_of(sent)
    assert "Query: egfr" in page_context_of(sent)
    assert [t["name"] for t in sent["tools"]] == ["search_pubmed", "lookup", "boom", "huge", "slow", "get_staged_items"]
    nxt = follow_up_works(alice, fake_llm, conv_id)
    assert [m["role"] for m in nxt["messages"]] == ["user", "assistant", "user"]


def test_tool_call_with_progress_and_payload(alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    fake_llm.script(Script.answer(tool_reply("lookup", {"q": "osimertinib"})), Script.text("Two items found."))
    events = chat(alice, "look it up")
    assert types(events) == ["conversation", "status", "text_delta", "usage", "tool_start", "tool_progress",
                             "tool_progress", "tool_complete", "text_delta", "usage", "context_update", "complete"]
    start = next(e for e in events if e.event == "tool_start").data
    assert start == {"tool": "lookup", "input": {"q": "osimertinib"}, "index": 0, "type": "tool_start"}
    progress = [e.data for e in events if e.event == "tool_progress"]
    assert [(p["stage"], p["progress"]) for p in progress] == [("searching", 0.3), ("ranking", 0.9)]
    completed = next(e for e in events if e.event == "tool_complete").data
    assert completed["is_error"] is False and completed["payload"]["type"] == "lookup_results"
    done = events[-1].data["payload"]
    # `at`: the call began after the visible "Let me check." (the tray draws the step there, also after a reload)
    assert done["tool_history"] == [{"tool_name": "lookup", "input": {"q": "osimertinib"},
                                     "output": "Found 2 items for osimertinib.", "is_error": False,
                                     "at": len("Let me check.")}]
    stored = alice.get(f"/api/conversations/{events[0].data['conversation_id']}").json()["messages"][-1]
    assert stored["content"].startswith("Let me check.") and stored["extras"]["tool_history"] == done["tool_history"]
    assert done["payloads"] == [{"id": completed["payload"]["id"], "type": "lookup_results",
                                 "data": {"q": "osimertinib", "items": [1, 2]}, "source": "tool",
                                 "tool": "lookup", "decision": None, "decided_at": None}]
    assert completed["payload"] == done["payloads"][0]  # one Card shape on every event
    second = fake_llm.requests[1]["messages"]
    assert second[-1]["content"][0]["type"] == "tool_result"
    assert second[-1]["content"][0]["content"] == "Found 2 items for osimertinib."
    follow_up_works(alice, fake_llm, events[0].data["conversation_id"])


def test_payload_marker_never_streams(alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    text = ('Here is a card:\n\nTEST_CARD: {"title": "EGFR {resistance}", "nested": {"a": [1, 2]}}\n\n'
            'Accept it if it helps.\nSUGGESTED_VALUES: [{"label": "More", "value": "Show me more"}]')
    fake_llm.script(Script.text(text))
    events = chat(alice, "card please")
    streamed = text_of(events)
    assert "TEST_CARD" not in streamed and "title" not in streamed and "SUGGESTED" not in streamed
    done = events[-1].data["payload"]
    assert done["message"] == "Here is a card:\n\nAccept it if it helps."
    assert [(p["type"], p["data"]["title"], p["source"]) for p in done["payloads"]] == [
        ("test_card", "EGFR {resistance}", "llm")]
    assert "custom_payload" not in done  # payloads[] is the one list of cards
    assert done["suggested_values"] == [{"label": "More", "value": "Show me more"}]
    stored = messages(db, events[0].data["conversation_id"])[1]
    assert stored.content == done["message"] and stored.extras["payloads"][0]["decision"] is None


def test_invalid_marker_json_is_dropped(alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    fake_llm.script(Script.text('The answer stands.\nTEST_CARD: {"title": "x",, }\nAfter.'))
    events = chat(alice, "card please")
    done = events[-1].data["payload"]
    assert done["payloads"] == [] and done["status"] == "complete"
    assert "The answer stands." in done["message"] and "TEST_CARD" not in text_of(events)
    stored = messages(db, events[0].data["conversation_id"])[1]
    assert stored.extras["payload_errors"] and "invalid JSON" in stored.extras["payload_errors"][0]


def test_marker_failing_schema_is_dropped(alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    fake_llm.script(Script.text('Card: TEST_CARD: {"name": "no title"}'))
    events = chat(alice, "card please")
    assert events[-1].data["payload"]["payloads"] == []
    stored = messages(db, events[0].data["conversation_id"])[1]
    assert "'title' is a required property" in stored.extras["payload_errors"][0]


@pytest.mark.parametrize(("tool", "tool_input", "expected"), [
    ("boom", {}, "boom failed: the index is offline"),
    ("no_such_tool", {}, "is not available here"),
    ("secret_tool", {}, "is not available here"),  # registered, but not on this page/tab
    ("lookup", {"q": 5}, "invalid input for lookup"),
])
def test_tool_errors_go_back_to_the_model(alice: TestClient, fake_llm: FakeAnthropic, tool: str,
                                          tool_input: dict[str, Any], expected: str) -> None:
    fake_llm.script(Script.answer(tool_reply(tool, tool_input)), Script.text("Sorry, that failed."))
    events = chat(alice, "try it")
    assert types(events)[-1] == "complete"
    completed = next(e for e in events if e.event == "tool_complete").data
    assert completed["is_error"] is True
    result = fake_llm.requests[1]["messages"][-1]["content"][0]
    assert result["is_error"] is True and expected in result["content"]
    follow_up_works(alice, fake_llm, events[0].data["conversation_id"])


def test_large_tool_results_are_truncated(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    fake_llm.script(Script.answer(tool_reply("huge", {})), Script.text("ok"))
    chat(alice, "big")
    result = fake_llm.requests[1]["messages"][-1]["content"][0]["content"]
    assert len(result) < 30_000 and "[truncated: 76000 more characters" in result


def test_tool_budget_makes_the_model_summarise(app: Any, alice: TestClient, fake_llm: FakeAnthropic) -> None:
    app.state.chat.limits.tool_budget = 2
    fake_llm.script(*(Script.answer(tool_reply("lookup", {"q": str(i)})) for i in range(2)),
                    Script.text("Summary of what I found."))
    events = chat(alice, "dig deep")
    assert [e.data["message"] for e in events if e.event == "status"] == ["Thinking…", "Summarising…"]
    assert "tool_choice" not in fake_llm.requests[1]
    assert fake_llm.requests[2]["tool_choice"] == {"type": "none"}
    assert events[-1].data["payload"]["message"] == "Let me check.\n\nLet me check.\n\nSummary of what I found."


def test_iteration_cap(app: Any, alice: TestClient, fake_llm: FakeAnthropic) -> None:
    app.state.chat.limits.max_iterations = 3
    fake_llm.script(Script.answer(tool_reply("lookup", {"q": "a"})), Script.answer(tool_reply("lookup", {"q": "b"})),
                    Script.text("Final."))
    events = chat(alice, "loop")
    assert len(fake_llm.requests) == 3 and fake_llm.requests[2]["tool_choice"] == {"type": "none"}
    assert events[-1].event == "complete"


def test_mid_stream_overload(alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    fake_llm.script(Script.stream_error(Reply(blocks=[{"type": "text", "text": "Partial thought"},
                                                      {"type": "text", "text": "never sent"}])))
    events = chat(alice, "hi")
    assert types(events) == ["conversation", "status", "text_delta", "error"]
    err = events[-1].data
    assert err["code"] == "overloaded_error" and err["retryable"] is True and "overloaded" in err["message"]
    conv_id = events[0].data["conversation_id"]
    stored = messages(db, conv_id)[1]
    assert stored.status == "failed" and stored.content == "Partial thought"
    assert err["message_id"] == stored.id
    follow_up_works(alice, fake_llm, conv_id)


def test_http_error_before_streaming(alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    fake_llm.script(Script.http_error(529, "overloaded_error"))
    events = chat(alice, "hi")
    assert types(events) == ["conversation", "status", "error"]
    assert events[-1].data["code"] == "overloaded_error"
    follow_up_works(alice, fake_llm, events[0].data["conversation_id"])


def test_dropped_connection(alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    fake_llm.script(Script.drop(Reply(blocks=[{"type": "text", "text": "I was saying"},
                                              {"type": "text", "text": "more"}])))
    events = chat(alice, "hi")
    assert events[-1].event == "error" and events[-1].data["code"] == "connection_lost"
    assert events[-1].data["retryable"] is True
    follow_up_works(alice, fake_llm, events[0].data["conversation_id"])


def test_truncated_stream(alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    fake_llm.script(Script.truncated(tool_reply("lookup", {"q": "x"}, preface="Cut off")))
    events = chat(alice, "hi")
    assert events[-1].event == "error" and events[-1].data["code"] == "truncated"
    conv_id = events[0].data["conversation_id"]
    stored = messages(db, conv_id)[1]
    assert stored.status == "failed"
    # the half-written tool_use was never run, yet the stored history pairs it with a result
    blocks = stored.extras["blocks"]
    assert blocks[1]["content"][0]["type"] == "tool_result" and blocks[1]["content"][0]["is_error"]
    follow_up_works(alice, fake_llm, conv_id)


def test_refusal_ends_the_turn(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    fake_llm.script(Script.answer(Reply(blocks=[{"type": "text", "text": "I can't help with that."}],
                                        stop_reason="refusal")))
    events = chat(alice, "something bad")
    done = events[-1].data["payload"]
    assert events[-1].event == "complete" and "declined" in done["message"]
    assert len(fake_llm.requests) == 1
    follow_up_works(alice, fake_llm, done["conversation_id"])


def _wait_for(predicate: Any, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("condition not met in time")


def test_a_client_that_leaves_does_not_stop_the_answer(alice: TestClient, fake_llm: FakeAnthropic,
                                                      db: Database) -> None:
    """A disconnect is not a stop: the turn runs to its end and the whole answer is saved."""
    fake_llm.script(Script.answer(Reply.text("Thinking aloud. " * 30), delay=0.01))
    seen: list[str] = []
    with alice.stream("POST", "/api/chat/stream", json={"message": "long one", "context": CONTEXT}) as r:
        for event in parse_lines(r.iter_lines()):
            seen.append(event.event)
            if event.event == "conversation":
                conv_id = event.data["conversation_id"]
            if seen.count("text_delta") >= 3:
                break
    rows = _wait_for(lambda: (m := messages(db, conv_id)) and m[-1].status != "running" and m)
    assert [r.role for r in rows] == ["user", "assistant"] and rows[0].content == "long one"
    assert rows[1].status == "complete" and rows[1].content == ("Thinking aloud. " * 30).strip()
    assert not fake_llm.disconnected.is_set()  # the model was never cut off
    follow_up_works(alice, fake_llm, conv_id)


def test_stop_keeps_the_partial_answer(alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    fake_llm.script(Script.slow("Partial. "))

    def stop(conv_id: int) -> None:
        assert alice.post(f"/api/conversations/{conv_id}/stop").json() == {"stopped": True}

    events, conv_id = stream_acting_midway(alice, {"message": "long one", "context": CONTEXT}, stop)
    done = events[-1]
    assert done.event == "complete" and done.data["payload"]["status"] == "interrupted"
    assert done.data["payload"]["message"].startswith("Partial.")
    stored = messages(db, conv_id)[1]
    assert stored.status == "interrupted" and stored.content == done.data["payload"]["message"]
    assert alice.post(f"/api/conversations/{conv_id}/stop").json() == {"stopped": False}
    follow_up_works(alice, fake_llm, conv_id)


def test_holding_pen_stages_long_lists(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    items = [{"id": f"T{i}", "phase": "PHASE3" if i % 3 == 0 else "PHASE2"} for i in range(45)]
    fake_llm.script(Script.answer(tool_reply("get_staged_items", {"kind": "items", "field": "phase",
                                                                  "contains": "phase3"})),
                    Script.text("15 are phase 3."))
    chat(alice, "how many phase 3?", context={**CONTEXT, "items": items})
    system = page_context_of(fake_llm.requests[0])
    assert "45 items" in system and "T44" not in system
    result = fake_llm.requests[1]["messages"][-1]["content"][0]["content"]
    assert result.startswith("15 of 45 staged items match") and '"T42"' in result


def test_busy_conversation_is_409(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    fake_llm.script(Script.slow("Busy. "))
    conv_id = None
    with alice.stream("POST", "/api/chat/stream", json={"message": "one", "context": CONTEXT}) as r:
        for event in parse_lines(r.iter_lines()):
            if event.event == "conversation":
                conv_id = event.data["conversation_id"]
            if event.event == "text_delta":
                second = alice.post("/api/chat/stream", json={"message": "two", "context": CONTEXT,
                                                              "conversation_id": conv_id})
                assert second.status_code == 409 and "already running" in second.json()["detail"]
                break
    assert conv_id is not None


def test_long_tools_get_heartbeats(app: Any, alice: TestClient, fake_llm: FakeAnthropic) -> None:
    app.state.chat.limits.heartbeat_seconds = 0.05
    fake_llm.script(Script.answer(tool_reply("slow", {})), Script.text("Done."))
    events = chat(alice, "take your time")
    statuses = [e.data["message"] for e in events if e.event == "status"]
    assert statuses[0] == "Thinking…" and len(statuses) >= 3
    assert all(s.startswith("Still working on slow… (") for s in statuses[1:])
    start = next(i for i, e in enumerate(events) if e.event == "tool_start")
    done = next(i for i, e in enumerate(events) if e.event == "tool_complete")
    assert all(start < i < done for i, e in enumerate(events) if e.event == "status" and i > 1)


def test_quiet_streams_send_comment_heartbeats(alice: TestClient, fake_llm: FakeAnthropic,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("backend.chat.sse.HEARTBEAT_SECONDS", 0.05)
    fake_llm.script(Script.answer(Reply.text("Slow but steady answer here."), delay=0.03))
    r = alice.post("/api/chat/stream", json={"message": "hi", "context": CONTEXT})
    # Heartbeats are comments (a ping may still race the last frame out); the last event is data.
    events = [line for line in r.text.replace("\r\n", "\n").strip().split("\n") if line and not line.startswith(":")]
    assert ": ping" in r.text and events[-1].startswith("data: ") and '"type": "complete"' in events[-1]
