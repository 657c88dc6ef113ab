"""What is on screen reaches the model, in Chromium: a filter set in the browser (a chart's table row, a chip
above the results) and the pinned chart are in the very next request's page context, with the loaded rows
the filter hides, on TrialScout and on Tablizer."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from backend.demo.wire import Reply
from tests.browser.harness import Journey
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.fakes.fake_page import page_context_of

pytestmark = pytest.mark.browser


def _filter_by_first_chart_row(j: Journey) -> str:
    page = j.page
    page.get_by_test_id("charts-toggle").click()
    chart = page.get_by_test_id("chart").first
    expect(chart.get_by_test_id("chart-canvas")).to_have_attribute("data-ready", "true")
    chart.get_by_test_id("chart-table-toggle").click()
    chart.get_by_test_id("chart-table-filter").first.click()
    chip = page.get_by_test_id("filter-chip").first
    expect(chip).to_be_visible()
    return chip.inner_text().replace("×", "").strip()


def _ask(j: Journey, fake_llm: FakeAnthropic) -> str:
    fake_llm.script(Script.answer(Reply.text("Noted.")))
    if not j.page.get_by_test_id("chat-tray").is_visible():
        j.open_chat()
    j.page.get_by_test_id("chat-input").fill("Why did I get so few results?")
    j.page.get_by_test_id("chat-input").press("Enter")
    expect(j.page.get_by_test_id("chat-input")).to_be_enabled()
    expect(j.last_answer()).to_contain_text("Noted.")
    return page_context_of(fake_llm.requests[-1])


@pytest.mark.parametrize("app", ["trialscout", "tablizer"])
def test_a_filter_set_in_the_browser_is_in_the_next_request(scripted_journey: Journey, fake_llm: FakeAnthropic,
                                                            app: str) -> None:
    j = scripted_journey
    j.sign_in(f"/{app}")
    j.search(app, "melanoma")
    before = _ask(j, fake_llm)
    assert "- Active filters: none" in before
    label = _filter_by_first_chart_row(j)
    sent = _ask(j, fake_llm)
    line = next(x for x in sent.splitlines() if x.startswith("- Active filters ("))
    assert label.split(":")[0] in line, (label, line)
    assert "- Pinned charts (1): " in sent
    assert " shown in the table after filters" in next(x for x in sent.splitlines() if x.startswith("- Results:"))
    j.shot(f"{app}-filter-in-context")
    j.assert_clean()
