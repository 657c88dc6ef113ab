"""Charts and table filters in Chromium: a click on a bar filters the table (chip shown, removable), a chart the
tray proposes is drawn inline and pinned by Accept, an accepted filter_suggestion narrows the table."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import Locator, expect

from backend.demo.wire import Reply
from tests.browser.harness import Journey
from tests.fakes.anthropic_server import FakeAnthropic, Script

pytestmark = pytest.mark.browser

SEARCH = {"condition": "melanoma", "status": ["RECRUITING", "NOT_YET_RECRUITING"]}


def _search_trials(j: Journey) -> int:
    return j.search("trialscout", "melanoma").count()


def _click_first_bar(chart: Locator) -> None:
    """Click the top bar of a horizontal bar chart on its canvas, as a user would: the largest bar is first,
    so walking right along its middle reaches it past the axis labels."""
    canvas = chart.get_by_test_id("chart-canvas")
    expect(canvas).to_have_attribute("data-ready", "true")
    box = canvas.bounding_box()
    assert box
    page = chart.page
    bars = chart.locator("xpath=ancestor::*[@data-testid='trialscout-page']").get_by_test_id("filter-chip")
    for step in range(4, 20):
        page.mouse.click(box["x"] + box["width"] * step / 20, box["y"] + 8 + 12)
        if bars.count():
            return
    pytest.fail("no bar was hit along the first row of the chart")


HAS_COLOUR = """([selector, rgb]) => {
  const canvas = document.querySelector(selector);
  const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  for (let i = 0; i < data.length; i += 4) {
    const near = (k) => Math.abs(data[i + k] - rgb[k]) < 3;
    if (near(0) && near(1) && near(2)) return true;
  }
  return false;
}"""


def _phases(j: Journey) -> list[list[str]]:
    ids = j.page.get_by_test_id("result-row").evaluate_all("rows => rows.map(r => r.dataset.id)")
    return [j.api_get(f"/api/trials/{i}")["phase"] for i in ids]


def test_a_bar_click_filters_trialscout_and_the_chip_removes_it(demo_journey: Journey) -> None:
    j, page = demo_journey, demo_journey.page
    j.sign_in("/trialscout")
    _search_trials(j)
    total_before = page.get_by_test_id("results-summary").inner_text()

    page.get_by_test_id("charts-toggle").click()
    # The panel opens with the field that tells this result set apart most (never a field of one value).
    first = page.get_by_test_id("chart").first
    expect(first.get_by_test_id("chart-canvas")).to_have_attribute("data-ready", "true")
    opened = first.get_attribute("data-facet")
    facets = ["phase", "status", "start_year", "study_type", "sponsor_class", "intervention_type", "enrollment"]
    counted = page.request.post(f"{j.app.url}/api/stats/trials", data=json.dumps(
        {"search": {"condition": "melanoma"}, "facets": facets, "limit": 12}),
        headers={"Content-Type": "application/json"}).json()["facets"]
    assert opened in facets and next(f for f in counted if f["facet"] == opened)["distinct"] > 1
    page.get_by_test_id("chart-facet").select_option("phase")
    page.get_by_test_id("chart-kind").select_option("bar")
    page.get_by_test_id("chart-add").click()
    chart = page.locator("[data-testid='chart'][data-facet='phase']").last
    expect(chart.get_by_test_id("chart-canvas")).to_have_attribute("data-ready", "true")
    expect(chart.get_by_test_id("chart-footnote")).to_contain_text("Over ")
    # The bars are in the theme's accent; a theme that changes the custom property redraws them in its colour.
    canvas = "[data-testid='chart'][data-facet='phase'] canvas"
    page.wait_for_function(HAS_COLOUR, arg=[canvas, [0x1F, 0x5F, 0xBF]])
    page.evaluate("() => document.documentElement.style.setProperty('--accent', '#d55e00')")
    page.wait_for_function(HAS_COLOUR, arg=[canvas, [0xD5, 0x5E, 0x00]])
    assert not page.evaluate(HAS_COLOUR, [canvas, [0x1F, 0x5F, 0xBF]])
    page.evaluate("() => document.documentElement.style.removeProperty('--accent')")
    page.wait_for_function(HAS_COLOUR, arg=[canvas, [0x1F, 0x5F, 0xBF]])
    # The figures are the whole result set's: the chart's table view lists the statistics route's counts.
    chart.get_by_test_id("chart-table-toggle").click()
    stats = page.request.post(f"{j.app.url}/api/stats/trials", data=json.dumps(
        {"search": {"condition": "melanoma"}, "facets": ["phase"], "limit": 15}),
        headers={"Content-Type": "application/json"}).json()
    top = stats["facets"][0]["buckets"][0]
    table = chart.get_by_test_id("chart-table")
    expect(table).to_contain_text(f"{top['count']:,}")
    expect(table).not_to_contain_text("PHASE")  # readable labels, not enum names
    j.shot("charts-table-view")
    chart.get_by_test_id("chart-table-toggle").click()
    j.shot("charts-panel")

    _click_first_bar(chart)
    chip = page.get_by_test_id("filter-chip")
    expect(chip).to_have_count(1)
    label = {"PHASE1": "Phase 1", "PHASE2": "Phase 2", "PHASE3": "Phase 3", "NA": "N/A", "PHASE4": "Phase 4",
             "EARLY_PHASE1": "Early Phase 1"}[top["value"]]
    expect(chip).to_contain_text(f"Phase: {label}")
    # Phase is a filter of the search itself: the whole result set narrows, every row has that phase.
    expect(page.get_by_test_id("results-summary")).not_to_have_text(total_before)
    expect(page.get_by_test_id(f"trial-phase-{top['value']}")).to_be_checked()
    expect(page.get_by_test_id("results-summary")).to_contain_text(f"{top['count']:,} trials")
    assert all(top["value"] in phases for phases in _phases(j))
    j.shot("bar-clicked-filtered")

    page.get_by_test_id("filter-chip-remove").click()
    expect(page.get_by_test_id("filter-chip")).to_have_count(0)
    expect(page.get_by_test_id("results-summary")).to_have_text(total_before)
    j.shot("chip-removed")

    # A world map of the trials' countries and a stacked bar (status split by phase) draw too, CSP and all.
    page.get_by_test_id("chart-facet").select_option("country")
    expect(page.get_by_test_id("chart-kind")).to_have_value("map")
    page.get_by_test_id("chart-add").click()
    page.get_by_test_id("chart-facet").select_option("status")
    page.get_by_test_id("chart-kind").select_option("stacked_bar")
    page.get_by_test_id("chart-stack-by").select_option("phase")
    page.get_by_test_id("chart-add").click()
    charts = page.get_by_test_id("chart")
    expect(charts).to_have_count(4)
    for chart in (charts.nth(2), charts.nth(3)):
        expect(chart.get_by_test_id("chart-canvas")).to_have_attribute("data-ready", "true")
    expect(charts.nth(2)).to_have_attribute("data-kind", "map")
    expect(charts.nth(3)).to_contain_text("Status by phase")
    j.shot("map-and-stacked")
    j.assert_clean()


def test_a_chart_row_narrows_the_loaded_rows_on_tablizer(demo_journey: Journey) -> None:
    j, page = demo_journey, demo_journey.page
    j.sign_in("/tablizer")
    rows = j.search("tablizer", "melanoma")
    loaded = rows.count()
    page.get_by_test_id("charts-toggle").click()
    chart = page.get_by_test_id("chart").first
    expect(chart).to_have_attribute("data-facet", "year")
    expect(chart.get_by_test_id("chart-canvas")).to_have_attribute("data-ready", "true")
    chart.get_by_test_id("chart-table-toggle").click()
    first = chart.get_by_test_id("chart-table-filter").first
    year = first.inner_text()
    first.click()
    expect(page.get_by_test_id("filter-chip")).to_contain_text(f"Publication year: {year}")
    ids = rows.evaluate_all("rows => rows.map(r => r.dataset.id)")
    assert 0 < len(ids) <= loaded
    assert all(j.api_get(f"/api/articles/{pmid}")["year"] == int(year) for pmid in ids)
    j.shot("year-filtered")
    page.get_by_test_id("filter-chip-remove").click()
    expect(rows).to_have_count(loaded)
    j.assert_clean()


def test_the_tray_proposes_a_chart_and_accept_pins_it(demo_journey: Journey) -> None:
    j, page = demo_journey, demo_journey.page
    j.sign_in("/trialscout")
    _search_trials(j)
    j.open_chat()
    page.get_by_test_id("chat-input").fill("Show me the phase breakdown")
    page.get_by_test_id("chat-input").press("Enter")
    card = page.get_by_test_id("card-chart")
    expect(card).to_be_visible()
    expect(card.get_by_test_id("chart-canvas")).to_have_attribute("data-ready", "true")
    expect(j.last_answer()).to_contain_text("trials in the result set")
    j.shot("chart-card")
    card.get_by_test_id("card-accept").click()
    expect(card.get_by_test_id("card-decision")).to_contain_text("Accepted")
    pinned = page.get_by_test_id("charts-panel").get_by_test_id("chart")
    expect(pinned).to_have_count(1)
    expect(pinned).to_contain_text("Trials by phase")
    expect(pinned.get_by_test_id("chart-canvas")).to_have_attribute("data-ready", "true")
    j.shot("chart-pinned")
    j.assert_clean()


def test_an_accepted_filter_suggestion_narrows_the_table(scripted_journey: Journey, fake_llm: FakeAnthropic) -> None:
    j, page = scripted_journey, scripted_journey.page
    j.sign_in("/trialscout")
    loaded = _search_trials(j)
    statuses: list[Any] = [j.api_get(f"/api/trials/{i}")["status"] for i in
                           page.get_by_test_id("result-row").evaluate_all("rows => rows.map(r => r.dataset.id)")]
    value = next(s for s in dict.fromkeys(statuses) if s and 0 < statuses.count(s) < loaded)
    suggestion = {"field": "status", "operator": "equals", "value": value, "explanation": f"Only {value} trials"}
    fake_llm.script(Script.answer(Reply.text("Narrow it like this.\n\nFILTER_SUGGESTION: " + json.dumps(suggestion))))
    j.open_chat()
    page.get_by_test_id("chat-input").fill("Only the ones not yet recruiting")
    page.get_by_test_id("chat-input").press("Enter")
    card = page.get_by_test_id("card-filter_suggestion")
    expect(card).to_contain_text(value)
    card.get_by_test_id("card-accept").click()
    expect(page.get_by_test_id("filter-chip")).to_contain_text(f"Status is {value}")
    expect(page.get_by_test_id("result-row")).to_have_count(statuses.count(value))
    j.shot("filter-suggestion-accepted")
    page.get_by_test_id("filter-chip-remove").click()
    expect(page.get_by_test_id("result-row")).to_have_count(loaded)
    j.assert_clean()
