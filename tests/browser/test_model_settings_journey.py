"""Per-conversation model settings and the context meter in Chromium, against the scripted fake Messages
API: the model picked in the tray is the model the fake receives, and the meter shows the last request's
input tokens, not the sum over the turn's model calls."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from backend.demo.wire import Reply
from tests.browser.harness import Journey
from tests.fakes.anthropic_server import FakeAnthropic, Script

pytestmark = pytest.mark.browser


def test_switch_model_and_read_the_context_meter(scripted_journey: Journey, fake_llm: FakeAnthropic) -> None:
    j, page = scripted_journey, scripted_journey.page
    j.sign_in("/tablizer")
    j.open_chat()

    # A new conversation: pick Opus and a shorter answer before the first message.
    page.get_by_test_id("chat-settings-toggle").click()
    page.get_by_test_id("chat-settings-model").select_option("claude-opus-4-6")
    page.get_by_test_id("chat-settings-max-tokens").fill("4096")
    page.get_by_test_id("chat-settings-save").click()
    expect(page.get_by_test_id("chat-settings-toggle")).to_contain_text("Opus 4.6")

    # A tool turn of two model calls: 2,644 input, then 300 + 4,000 cache read + 634 cache write = 4,934.
    fake_llm.script(
        Script.answer(Reply.tool("get_staged_items", {"kind": "articles"}, preface="Checking.",
                                 input_tokens=2644, output_tokens=20)),
        Script.answer(Reply.text("Nothing staged yet.", input_tokens=300, cache_read_input_tokens=4000,
                                 cache_creation_input_tokens=634, output_tokens=10)))
    page.get_by_test_id("chat-input").fill("What is staged?")
    page.get_by_test_id("chat-input").press("Enter")
    expect(j.last_answer()).to_contain_text("Nothing staged yet.")
    assert [(r["model"], r["max_tokens"]) for r in fake_llm.requests] == [("claude-opus-4-6", 4096)] * 2
    meter = page.get_by_test_id("context-meter")
    expect(meter).to_contain_text("Context 4.9k / 200k")  # the last request, not 7.6k summed over both calls
    expect(meter).not_to_contain_text("7.6k")
    j.shot("context-meter")

    # Switch the open conversation to Haiku: stored, acknowledged, and the next turn uses it.
    page.get_by_test_id("chat-settings-toggle").click()
    page.get_by_test_id("chat-settings-model").select_option("claude-haiku-4-5")
    page.get_by_test_id("chat-settings-save").click()
    expect(page.get_by_test_id("chat-settings-note")).to_contain_text("Saved: Haiku 4.5")
    conversation_id = j.remembered_conversation("tablizer")
    assert j.api_get(f"/api/conversations/{conversation_id}/config")["model"] == "claude-haiku-4-5"
    fake_llm.script(Script.answer(Reply.text("Haiku answers.", input_tokens=170_000, output_tokens=5)))
    page.get_by_test_id("chat-input").fill("And now?")
    page.get_by_test_id("chat-input").press("Enter")
    expect(j.last_answer()).to_contain_text("Haiku answers.")
    assert (fake_llm.requests[-1]["model"], fake_llm.requests[-1]["max_tokens"]) == ("claude-haiku-4-5", 4096)
    expect(meter).to_contain_text(re.compile(r"Context 170k / 200k · 85%"))
    expect(page.get_by_test_id("context-warning")).to_be_visible()
    j.shot("context-meter-warning")

    # After a reload the meter reads the stored answer's context usage.
    page.reload()
    j.tray_reopened()  # the tray's open state is in the URL
    expect(page.get_by_test_id("context-meter")).to_contain_text("Context 170k / 200k")
    expect(page.get_by_test_id("chat-settings-toggle")).to_contain_text("Haiku 4.5")
    j.assert_clean()
