"""Every turn reuses the previous turn's prompt (issue: conversation history cached, page context moved
to the turn). The fake Messages API computes what Claude's prompt cache would read, so these tests see
the cache the way the API reports it: `cache_read_input_tokens` in each call's usage."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from backend.chat.history import build_history
from tests.fakes.anthropic_server import FakeAnthropic, Script, tool_reply
from tests.fakes.fake_page import CONTEXT, chat
from tests.fakes.prompt_cache import PromptCache


def total_input(usage: dict[str, int]) -> int:
    return usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]


def test_a_ten_turn_conversation_reads_each_previous_prompt_from_the_cache(
        alice: TestClient, fake_llm: FakeAnthropic, test_registry: None) -> None:
    conversation_id: int | None = None
    usages: list[dict[str, int]] = []
    for turn in range(10):
        if turn % 3 == 1:  # a tool call: two model calls in one turn
            fake_llm.script(Script.answer(tool_reply("lookup", {"q": f"topic {turn}"})),
                            Script.text(f"Found what you asked in turn {turn}."))
        else:
            fake_llm.script(Script.text(f"Answer {turn}: " + "details " * 40))
        # The page changes on every turn: another query, other loaded items.
        context = {**CONTEXT, "query": f"query {turn}", "items": [{"id": f"i{turn}-{k}"} for k in range(turn)]}
        events = chat(alice, f"question {turn}", context, conversation_id)
        conversation_id = events[0].data["conversation_id"]
        usages += [e.data for e in events if e.event == "usage"]
        assert events[-1].event == "complete", events[-1].data
    requests = fake_llm.requests
    assert len(requests) == len(usages) == 13
    for i in range(1, len(requests)):
        previous = total_input(usages[i - 1])
        # Everything the previous request sent is read from the cache by this one.
        assert usages[i]["cache_read_input_tokens"] >= previous, (i, usages[i], previous)
    turn_starts = [0, 1, 3, 4, 5, 7, 8, 9, 11, 12]  # the first request of each turn
    shares = [usages[i]["cache_read_input_tokens"] / total_input(usages[i]) for i in turn_starts]
    assert all(share >= 0.8 for share in shares[4:]), shares  # from the fifth turn on
    assert shares[0] == 0 and shares[-1] > shares[1]  # the cached share grows with the conversation
    # The page context of each turn travels with its user message and stays there, byte for byte.
    last = requests[-1]
    assert all('<page_context page=' not in block["text"] for block in last["system"])
    user_texts = [b["text"] for m in last["messages"] if m["role"] == "user" for b in m["content"]
                  if b.get("type") == "text"]
    assert sum('<page_context page="test_page">' in t for t in user_texts) == 10
    assert any("query 0" in t for t in user_texts) and any("query 9" in t for t in user_texts)


def test_the_stored_usage_shows_the_cache(alice: TestClient, fake_llm: FakeAnthropic, test_registry: None,
                                          ) -> None:
    fake_llm.script(Script.text("One."), Script.text("Two."))
    first = chat(alice, "first")
    conversation_id = first[0].data["conversation_id"]
    chat(alice, "second", conversation_id=conversation_id)
    stored = alice.get(f"/api/conversations/{conversation_id}").json()["messages"][-1]["extras"]["usage"]
    assert stored["cache_read_input_tokens"] > 0 and stored["cache_creation_input_tokens"] > 0


def rows(turns: int) -> list[Any]:
    class Row:
        def __init__(self, role: str, content: str, extras: dict[str, Any]) -> None:
            self.role, self.content, self.extras = role, content, extras

    out: list[Any] = []
    for i in range(turns):
        sent = [{"type": "text", "text": f"<page_context>page {i}</page_context>"},
                {"type": "text", "text": f"question {i}"}]
        out.append(Row("user", f"question {i}", {"sent_content": sent}))
        out.append(Row("assistant", f"answer {i}", {"blocks": [
            {"role": "assistant", "content": [{"type": "text", "text": f"answer {i}"}]}]}))
    return out


def test_trimming_moves_in_steps_so_the_prefix_is_stable_between_cuts() -> None:
    cache = PromptCache()
    hits = 0
    for turns in range(15, 45):
        # The new message is sent as the next turn will replay it.
        messages = build_history(rows(turns)[:-2], f"question {turns - 1}",
                                 f"<page_context>page {turns - 1}</page_context>")
        last = messages[-1]
        last["content"][-1] = {**last["content"][-1], "cache_control": {"type": "ephemeral"}}
        usage = cache.usage({"model": "m", "messages": messages})
        hits += usage.cache_read_input_tokens > 0
        assert last["content"][0]["text"] == f"<page_context>page {turns - 1}</page_context>"
    assert hits >= 25  # only the first turn and the turns where the cut moves miss (every 8th turn)
