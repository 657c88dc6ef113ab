"""Saved views and the data grid in the browser (issue 31): build a view on TrialScout — an AI column with
its Yes filter, a sort, a pinned chart, a column from the chooser, a selection, the folded search form —
then reload, and sign in from a fresh browser context (another device): the same view. Named views are
saved, reopened, deleted (asked once) and brought back with Undo. At a desktop and a phone size, light and
dark, axe with no serious violation in each state (tests/browser/looks.py); screenshots go to
test-artifacts/browser/<test>/.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from playwright.sync_api import Browser, Locator, expect

from tests.browser.harness import Journey, LiveApp
from tests.browser.looks import check, context_options, looks

pytestmark = pytest.mark.browser

CONDITION = "non-small cell lung cancer"
COLUMN = ("Adults", "Aged 18 years or older")  # the demo model decides this from the trials' eligibility ages


def _wait_saved(j: Journey, want: dict[str, Any]) -> dict[str, Any]:
    """The working state on the server once it holds `want` (the page saves a moment after each change)."""
    deadline = time.monotonic() + 20
    state: dict[str, Any] = {}
    while time.monotonic() < deadline:
        state = j.api_get("/api/views/trialscout/current")["state"] or {}
        if all(state.get(k) == v for k, v in want.items()):
            return state
        time.sleep(0.3)
    raise AssertionError(f"the saved view never held {want}: {state}")


def _fresh_views(j: Journey) -> None:
    """The demo user's views start empty (the journeys share one app and one user), then TrialScout again."""
    for view in j.api_get("/api/views/trialscout"):
        assert j.page.request.delete(f"{j.app.url}/api/views/trialscout/{view['id']}").ok
    assert j.page.request.put(f"{j.app.url}/api/views/trialscout/current", data=json.dumps({"state": {}}),
                              headers={"Content-Type": "application/json"}).ok
    j.page.goto("/trialscout")
    expect(j.page.get_by_test_id("view-save-status")).to_have_attribute("data-status", "saved")


def _fresh_search(j: Journey) -> Locator:
    """Signed in with no saved views, the condition searched: the result rows. (Signing in on TrialScout
    would restore the view an earlier journey of the same user left, and the URL with it.)"""
    j.sign_in("/tablizer")
    _fresh_views(j)
    return j.search("trialscout", CONDITION)


def _shown(j: Journey) -> dict[str, Any]:
    """What the grid shows, as a person would read it."""
    page = j.page
    return {
        "rows": page.get_by_test_id("result-row").evaluate_all("rows => rows.map(r => r.dataset.id)"),
        "headers": page.locator(".data-grid thead th").evaluate_all("ths => ths.map(t => t.innerText.trim())"),
        "sorted": page.locator(".data-grid thead th[aria-sort='descending']").all_inner_texts(),
        "selected": page.get_by_test_id("selection-count").inner_text(),
        "checked": page.locator("tr[aria-selected='true']").evaluate_all("rows => rows.map(r => r.dataset.id)"),
        "filter": page.get_by_test_id("ai-column-filter").input_value(),
        "charts": page.get_by_test_id("charts-toggle").inner_text(),
        "summary": page.get_by_test_id("search-summary").inner_text(),
    }


def _wait_restored(j: Journey, before: dict[str, Any]) -> None:
    page = j.page
    expect(page.get_by_test_id("selection-count")).to_have_text(before["selected"])
    expect(j.ai_column_progress(COLUMN[0])).to_have_attribute("data-status", "complete")
    expect(page.get_by_test_id("result-row")).to_have_count(len(before["rows"]))


@pytest.mark.parametrize(("size", "scheme"), looks("desktop-light", "phone-dark"))
def test_a_view_survives_reload_and_another_device(look: Journey, browser: Browser, demo_app: LiveApp,
                                                    size: dict, scheme: str) -> None:
    j, page = look, look.page
    rows = _fresh_search(j)
    loaded = rows.count()

    # -- build the view -------------------------------------------------------------------------------------
    name, criteria = COLUMN
    j.add_ai_column(name, criteria)
    # Sorting by the verdict puts Yes first and the blanks last.
    page.get_by_test_id(f"sort-ai:{name}").click()
    verdicts = [v.split(" (")[0] for v in  # the verdict, less where its evidence is
                page.locator(f'[data-testid="ai-cell"][data-column="{name}"]').all_inner_texts()]
    rank = {"Yes": 0, "No": 1, "Unknown": 2}
    assert [rank.get(v, 3) for v in verdicts] == sorted(rank.get(v, 3) for v in verdicts), verdicts
    page.get_by_test_id("ai-column-filter").select_option("yes")
    kept = rows.count()
    assert 0 < kept <= loaded
    page.get_by_test_id("sort-enrollment").click()
    page.get_by_test_id("sort-enrollment").click()  # descending
    enrollments = [int(t.replace(",", "")) for t in
                   page.locator("td[data-label='Enrollment']").all_inner_texts() if t.strip()]
    assert enrollments == sorted(enrollments, reverse=True)
    page.get_by_test_id("charts-toggle").click()
    expect(page.get_by_test_id("charts-toggle")).to_have_text("Hide charts")
    page.get_by_test_id("column-chooser").locator("summary").click()
    page.get_by_test_id("show-conditions").check()
    page.get_by_test_id("show-sponsor").uncheck()
    page.keyboard.press("Escape")
    page.mouse.click(5, 5)
    ids = rows.evaluate_all("rows => rows.map(r => r.dataset.id)")
    chosen = ids[:2] if len(ids) > 1 else ids
    for nct in chosen:
        page.get_by_label(f"Select {nct}").check()
    expect(page.get_by_test_id("selection-count")).to_have_text(f"{len(chosen)} selected")
    bar = page.get_by_test_id("selection-bar")
    for label in ("Report", "Export", "Ask about these", "Clear"):
        expect(bar.get_by_role("button", name=label)).to_be_visible()
    page.get_by_test_id("search-toggle").click()
    expect(page.get_by_test_id("search-summary")).to_contain_text(CONDITION)
    check(j, "view-built")

    # The title is a real link (a new tab opens the trial); a plain click opens it beside the table.
    link = rows.first.get_by_test_id("row-open")
    assert link.get_attribute("href") == f"/trialscout?open={ids[0]}" and link.get_attribute("target") == "_blank"
    # Keyboard: the rows take focus in turn, Space selects, Enter opens.
    rows.first.focus()
    page.keyboard.press("ArrowDown")
    expect(rows.nth(1 if len(ids) > 1 else 0)).to_be_focused()
    page.keyboard.press("ArrowUp")
    expect(rows.first).to_be_focused()

    _wait_saved(j, {"selected": sorted(chosen), "sort": {"field": "enrollment", "direction": "desc"},
                    "collapsed": True})
    before = _shown(j)
    assert before["filter"] == "yes" and before["charts"] == "Hide charts"
    assert "Conditions" in before["headers"] and "Sponsor" not in before["headers"]

    # -- a reload: the same view ------------------------------------------------------------------------------
    page.reload()
    _wait_restored(j, before)
    assert _shown(j) == before
    check(j, "after-reload")

    # -- another device: a fresh browser context, the same user --------------------------------------------------
    other = browser.new_context(base_url=demo_app.url, **context_options(size, scheme))
    try:
        second = Journey(page=other.new_page(), app=demo_app, shots=j.shots, phone=j.phone)
        second.shot_count = j.shot_count
        second.page.goto("/trialscout")
        second.page.get_by_test_id("login-username").fill("demo")
        second.page.get_by_test_id("login-password").fill("demo")
        second.page.get_by_test_id("login-submit").click()
        expect(second.page.get_by_test_id("current-user")).to_have_text("demo")
        _wait_restored(second, before)
        assert _shown(second) == before
        check(second, "another-device")
        second.assert_clean()
        j.shot_count = second.shot_count
    finally:
        other.close()

    # -- a named view: saved, changed away from, reopened; deleting asks once and Undo brings it back ------------------
    page.get_by_test_id("views-menu").locator("summary").click()
    page.get_by_test_id("view-name").fill("Adults, by enrollment")
    page.get_by_test_id("view-save").click()
    expect(page.get_by_test_id("saved-view")).to_have_count(1)
    page.mouse.click(5, 5)
    page.get_by_test_id("selection-clear").click()
    expect(page.get_by_test_id("selection-bar")).to_have_count(0)
    page.get_by_test_id("views-menu").locator("summary").click()
    page.get_by_test_id("view-open").click()
    expect(page.get_by_test_id("selection-count")).to_have_text(before["selected"])
    page.get_by_test_id("views-menu").locator("summary").click()
    page.get_by_test_id("view-delete").click()
    expect(page.get_by_test_id("saved-view")).to_have_count(1)  # asked, not yet gone
    page.get_by_test_id("view-delete-confirm").click()
    expect(page.get_by_test_id("saved-view")).to_have_count(0)
    page.get_by_test_id("view-undo-delete").click()
    expect(page.get_by_test_id("saved-view")).to_have_count(1)
    check(j, "named-view-restored")
    j.assert_clean()


@pytest.mark.parametrize(("size", "scheme"), looks("phone-light"))
def test_on_a_phone_rows_are_cards_and_accept_leads_back_to_the_results(look: Journey, size: dict,
                                                                         scheme: str) -> None:
    j, page = look, look.page
    rows = _fresh_search(j)
    # One card per row: the row is no wider than the screen, and Status and Sponsor are on it, labelled.
    box = rows.first.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= size["width"]
    for label in ("Status", "Sponsor"):
        cell = rows.first.locator(f"td[data-label='{label}']")
        cell_box = cell.bounding_box()
        assert cell_box and cell_box["x"] + cell_box["width"] <= size["width"], label
    check(j, "cards")

    j.open_chat()
    page.get_by_test_id("chat-input").fill("I only want trials that allow brain metastases")
    page.get_by_test_id("chat-send").click()
    card = page.get_by_test_id("card-ai_column_suggestion")
    card.get_by_test_id("card-accept").click()
    expect(card.get_by_test_id("card-decision")).to_have_text("✓ Accepted")
    back = page.get_by_test_id("view-results")
    expect(back).to_have_text(f"View {rows.count()} results")
    check(j, "accepted-in-tray")
    back.click()
    expect(page.get_by_test_id("chat-tray")).to_have_count(0)
    expect(page.get_by_test_id("ai-col-header")).to_be_visible()
    check(j, "back-at-the-results")
    j.assert_clean()
