"""A reload mid-answer: the tray shows the same conversation, and the answer continues to its end there."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.browser.conftest import _make_journey, _start_app
from tests.browser.harness import Journey, LiveApp

pytestmark = pytest.mark.browser

# The demo model quotes the question back (up to 200 characters), so a long question makes a long answer;
# at 250 ms per three words it streams for several seconds, time enough to reload in the middle.
QUESTION = ("Walk me through how resistance to osimertinib develops in EGFR mutant lung cancer, which "
            "bypass tracks matter most, and what the trials after progression have shown so far, in detail")
SLOW_DELAY_MS = "250"

# Every committed text of the newest answer, from the moment it is installed (after the reload).
WATCH_ANSWER = """() => {
  const seen = [];
  window.__answers = seen;
  const record = () => {
    const answers = document.querySelectorAll('[data-testid="message-assistant"]');
    const md = answers.length ? answers[answers.length - 1].querySelector('.markdown') : null;
    const text = md ? md.textContent : '';
    if (text && text !== seen[seen.length - 1]) seen.push(text);
  };
  new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true });
}"""


@pytest.fixture(scope="module")
def slow_demo_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveApp]:
    """The demo model streaming slowly enough that a reload lands mid-answer."""
    yield from _start_app(Path(tmp_path_factory.mktemp("slow_demo_app")), {"COLLEAGUE_DEMO_DELAY_MS": SLOW_DELAY_MS})


@pytest.fixture
def slow_journey(request: pytest.FixtureRequest, browser: Browser, slow_demo_app: LiveApp) -> Iterator[Journey]:
    yield from _make_journey(request, browser, slow_demo_app)


def test_reload_mid_answer_the_answer_continues_to_its_end_in_the_tray(slow_journey: Journey) -> None:
    j, page = slow_journey, slow_journey.page
    j.sign_in("/tablizer")
    expect(page.get_by_test_id("tablizer-page")).to_be_visible()
    j.open_chat()
    page.get_by_test_id("chat-input").fill(QUESTION)
    page.get_by_test_id("chat-send").click()

    answer = j.last_answer()
    expect(answer).to_contain_text("demo model")
    expect(page.get_by_test_id("chat-stop")).to_be_visible()
    conversation_id = j.remembered_conversation("tablizer")
    before = j.api_get(f"/api/conversations/{conversation_id}")["messages"]
    assert [m["role"] for m in before] == ["user", "assistant"]
    assert before[-1]["status"] == "running", "the answer finished before the reload: slow the demo model down"
    j.shot("streaming-before-reload")

    page.reload()
    expect(page.get_by_test_id("tablizer-page")).to_be_visible()
    page.evaluate(WATCH_ANSWER)
    j.tray_reopened()

    # The same conversation, still answering: the text so far, the streaming line and Stop.
    expect(page.get_by_test_id("message-user").locator(".message-text")).to_have_text(QUESTION)
    expect(answer).to_contain_text("demo model")
    expect(page.get_by_test_id("chat-stop")).to_be_visible()
    expect(page.get_by_test_id("chat-status")).to_be_visible()
    j.shot("resumed-after-reload")

    # ... and the answer goes on to its end in the tray.
    expect(page.get_by_test_id("chat-send")).to_be_visible(timeout=60_000)
    expect(page.get_by_test_id("chat-status")).to_have_count(0)
    stored = j.api_get(f"/api/conversations/{conversation_id}")["messages"]
    assert [(m["role"], m["status"]) for m in stored] == [("user", "complete"), ("assistant", "complete")]
    # The stored Markdown as the tray renders it: list items show without their "- " marker.
    final = " ".join(re.sub(r"(?m)^\s*[-*] ", "", stored[-1]["content"]).split())
    shown = " ".join(answer.locator(".markdown").inner_text().split())
    assert shown == final
    assert shown.count("I'm the demo model") == 1
    expect(page.get_by_test_id("message-assistant")).to_have_count(1)
    expect(page.get_by_test_id("message-user")).to_have_count(1)
    expect(page.get_by_test_id("suggested-value").first).to_be_visible()

    # It streamed after the reload (not only reloaded when done), each text extending the one before.
    texts = [" ".join(t.split()) for t in page.evaluate("() => window.__answers")]
    assert len(texts) >= 2 and texts[-1] == final, texts
    growing = texts[:-1]
    for shorter, longer in zip(growing, growing[1:], strict=False):
        assert longer.startswith(shorter) and len(longer) > len(shorter), texts
    assert len(texts[0]) < len(final), texts
    j.shot("answer-complete")
    j.assert_clean()
