"""Rebuilding and trimming the Messages API history (spec: trial-navigator "Conversation History Trimming")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backend.chat.history import BRIDGE_ACK, BRIDGE_NOTE, TRIM_KEEP, TRIM_STEP, build_history, trim
from tests.fakes.anthropic_server import validate_request


@dataclass
class Row:
    role: str
    content: str
    extras: dict[str, Any] = field(default_factory=dict)


def tool_turn(i: int) -> list[dict[str, Any]]:
    return [
        {"role": "assistant", "content": [{"type": "text", "text": f"checking {i}"},
                                          {"type": "tool_use", "id": f"t{i}", "name": "x", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"}]},
        {"role": "assistant", "content": [{"type": "text", "text": f"answer {i}"}]},
    ]


def conversation(turns: int) -> list[Row]:
    rows: list[Row] = []
    for i in range(turns):
        rows.append(Row("user", f"question {i}"))
        rows.append(Row("assistant", f"answer {i}", {"blocks": tool_turn(i)}))
    return rows


def test_short_history_is_rebuilt_verbatim() -> None:
    messages = build_history(conversation(2), "new question")
    assert len(messages) == 2 * 4 + 1
    assert messages[1]["content"][1]["type"] == "tool_use" and messages[2]["content"][0]["type"] == "tool_result"
    assert messages[-1] == {"role": "user", "content": [{"type": "text", "text": "new question"}]}
    assert validate_request({"messages": messages}) == []


def test_trimming_never_splits_tool_pairs_and_adds_a_bridge() -> None:
    for turns in range(11, 20):
        messages = build_history(conversation(turns), "latest")
        assert len(messages) < TRIM_KEEP + TRIM_STEP + 3
        assert messages[0]["content"][0]["text"] == BRIDGE_NOTE
        assert validate_request({"messages": messages}) == [], turns
        assert messages[-1]["content"][-1]["text"] == "latest"


def test_bridge_gets_an_acknowledgement_when_the_kept_part_starts_with_the_user() -> None:
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": [{"type": "text", "text": str(i)}]}
                for i in range(31)]
    trimmed = trim(messages, threshold=24, keep=21, step=10)  # the cut lands on message 10, a user message
    assert [m["content"][0]["text"] for m in trimmed[:3]] == [BRIDGE_NOTE, BRIDGE_ACK, "10"]
    assert [m["content"][0]["text"] for m in trim(messages, threshold=24, keep=20, step=11)[:2]] == [
        BRIDGE_NOTE, "11"]
    assert validate_request({"messages": trimmed}) == []


def test_failed_turns_and_missing_answers_still_alternate() -> None:
    rows = [Row("user", "one"), Row("assistant", "", {"blocks": []}), Row("user", "two"), Row("user", "three")]
    messages = build_history(rows, "four")
    assert validate_request({"messages": messages}) == []
    assert messages[1]["content"][0]["text"] == "(no answer)"
    assert [b["text"] for b in messages[2]["content"]] == ["two", "three", "four"]


def test_decisions_are_noted_on_the_next_user_message() -> None:
    extras = {"blocks": [{"role": "assistant", "content": [{"type": "text", "text": "try this"}]}],
              "payloads": [{"id": "p1", "type": "pubmed_query_suggestion", "data": {"query": "EGFR"},
                            "decision": "dismissed"}, {"id": "p2", "type": "x", "data": {}, "decision": None}]}
    messages = build_history([Row("user", "q"), Row("assistant", "try this", extras)], "next")
    note, text = messages[-1]["content"]
    assert "pubmed_query_suggestion card (EGFR): dismissed" in note["text"] and "p2" not in note["text"]
    assert text["text"] == "next"
