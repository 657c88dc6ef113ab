"""Regenerate keeps the first answer: the tray shows "2 / 2" on the question, Previous brings the first answer
back, and a reload still shows the version chosen (scripted fake Messages API, Chromium)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.harness import Journey
from tests.fakes.anthropic_server import FakeAnthropic, Script

pytestmark = pytest.mark.browser


def test_regenerate_then_go_back_to_the_first_answer(scripted_journey: Journey, fake_llm: FakeAnthropic) -> None:
    j, page = scripted_journey, scripted_journey.page
    fake_llm.script(Script.text("The first answer."), Script.text("The second answer."))
    j.sign_in("/tablizer")
    j.open_chat()
    page.get_by_test_id("chat-input").fill("What is EGFR?")
    page.get_by_test_id("chat-input").press("Enter")
    expect(j.last_answer()).to_contain_text("The first answer.")
    expect(j.last_answer()).to_have_class("message message-assistant status-complete")

    j.last_answer().get_by_test_id("message-regenerate").click()
    expect(j.last_answer()).to_contain_text("The second answer.")
    question = page.get_by_test_id("message-user")
    expect(question).to_have_count(1)
    expect(question.get_by_test_id("version-position")).to_have_text("2 / 2")
    expect(question.get_by_role("button", name="Next version")).to_be_disabled()

    question.get_by_role("button", name="Previous version").click()
    expect(j.last_answer()).to_contain_text("The first answer.")
    expect(question.get_by_test_id("version-position")).to_have_text("1 / 2")
    j.shot("versions-first")

    page.reload()
    j.tray_reopened()
    expect(j.last_answer()).to_contain_text("The first answer.")
    expect(page.get_by_test_id("version-position")).to_have_text("1 / 2")
    page.get_by_role("button", name="Next version").focus()
    page.keyboard.press("Enter")  # the switcher works from the keyboard
    expect(j.last_answer()).to_contain_text("The second answer.")
    expect(page.get_by_test_id("version-position")).to_have_text("2 / 2")
    assert len(fake_llm.requests) == 2  # switching asks the model nothing
    j.assert_clean()
