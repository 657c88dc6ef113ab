"""AI columns in the browser: TrialScout evaluates a chat-suggested column over the loaded trials as rows
stream in, a hand-made column the demo model can decide from the trials' ages filters the table to Yes, a
cell opens its reasoning, the chat context carries the columns, and a new page re-evaluates.

Uses the shared fixtures of tests/browser/conftest.py (the real app with the demo model, offline corpus, a
fresh browser context per test); screenshots go to test-artifacts/browser/ai_columns/.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Locator, expect

from tests.browser.harness import Journey

pytestmark = pytest.mark.browser

CONDITION = "non-small cell lung cancer"
QUESTION = "I only want trials that allow brain metastases"
ADULTS = ("Adults", "Aged 18 years or older")  # the demo model decides this from the trials' eligibility ages
# A verdict, maybe qualified, and where its quotes are in the record: "No · conditional (Exclusion)".
VERDICT = re.compile(r"^(Yes|No|Unknown)( · (conditional|needs review))?( \([A-Z][^()]+\))?$")
SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "browser" / "ai_columns"

# Records the progress header's done/total and the pending cells each time the table changes, so the test
# can tell cells that filled in while the run went on from a column that appeared all at once.
WATCH_PROGRESS = """(name) => {
  const seen = [];
  window.__progress = seen;
  const record = () => {
    const header = document.querySelector(`[data-testid="ai-col-header"][data-name="${name}"]`);
    const bar = header && header.querySelector('[data-testid="ai-progress"]');
    if (!bar) return;
    const cells = `[data-testid="ai-cell"][data-column="${name}"][data-state="pending"]`;
    const pending = document.querySelectorAll(cells).length;
    const entry = `${bar.dataset.done}/${bar.dataset.total}/${bar.dataset.status}/${pending}`;
    if (entry !== seen[seen.length - 1]) seen.push(entry);
  };
  new MutationObserver(record).observe(document.body,
    { subtree: true, childList: true, characterData: true, attributes: true });
}"""


def _evaluate_counts(j: Journey, name: str, criteria: str, ids: list[str]) -> dict[str, Any]:
    """Run the column through the API (its results are cached by now) and return the `complete` event."""
    response = j.page.request.post(f"{j.app.url}/api/ai-columns/evaluate", data=json.dumps({
        "column": {"name": name, "criteria": criteria, "type": "boolean"}, "app": "trialscout", "ids": ids,
    }), headers={"Content-Type": "application/json"})
    assert response.ok, response.text()
    events = [json.loads(line[5:]) for line in response.text().splitlines() if line.startswith("data:")]
    assert events[-1]["type"] == "complete", events[-1]
    return events[-1]


def _column_cells(j: Journey, name: str) -> Locator:
    return j.page.locator(f'[data-testid="ai-cell"][data-column="{name}"]')


def _wait_complete(j: Journey, name: str, total: int) -> None:
    progress = j.ai_column_progress(name)
    expect(progress).to_have_attribute("data-status", "complete")
    expect(progress).to_have_attribute("data-done", str(total))
    expect(progress).to_have_attribute("data-total", str(total))
    expect(progress).to_have_text(f"{total}/{total}")
    expect(j.page.locator(f'[data-testid="ai-cell"][data-column="{name}"][data-state="pending"]')).to_have_count(0)


def test_ai_columns_fill_in_filter_and_explain_themselves(demo_journey: Journey) -> None:
    j, page = demo_journey, demo_journey.page
    shutil.rmtree(SHOTS, ignore_errors=True)
    SHOTS.mkdir(parents=True)
    j.shots = SHOTS

    j.sign_in("/trialscout")
    expect(page.get_by_test_id("trialscout-page")).to_be_visible()
    # The offline corpus answers this search with enough trials to filter.
    search = j.api_get(f"/api/trials/search?{urlencode({'condition': CONDITION, 'page_size': 25})}")
    trials = search["trials"]
    ids = [t["nct_id"] for t in trials]
    assert len(ids) >= 5, f"the offline search for {CONDITION!r} returned {len(ids)} trials"
    assert search["next_page_token"], "the journey pages forward: it needs a second page"

    page.get_by_test_id("trial-condition").fill(CONDITION)
    page.get_by_test_id("trial-search").click()
    rows = page.get_by_test_id("result-row")
    expect(rows).to_have_count(len(ids))

    # -- the chat suggests a column; Accept adds it and it fills in ----------------------------------------
    j.open_chat()
    page.get_by_test_id("chat-input").fill(QUESTION)
    page.get_by_test_id("chat-send").click()
    card = page.get_by_test_id("card-ai_column_suggestion")
    expect(card).to_be_visible()
    suggested = card.get_by_test_id("card-column-name").inner_text().strip()
    assert suggested
    j.shot("column-suggested")

    page.evaluate(WATCH_PROGRESS, suggested)
    with page.expect_request("**/api/ai-columns/evaluate") as evaluated:
        card.get_by_test_id("card-accept").click()
    expect(card.get_by_test_id("card-decision")).to_have_text("✓ Accepted")
    sent = evaluated.value.post_data_json
    assert sent["app"] == "trialscout" and sent["ids"] == ids and sent["column"]["name"] == suggested
    _wait_complete(j, suggested, len(ids))
    seen = page.evaluate("() => window.__progress")
    pending_seen = [s for s in seen if int(s.split("/")[3]) > 0]
    assert pending_seen, f"no cell was ever shown evaluating: {seen}"
    assert seen[-1] == f"{len(ids)}/{len(ids)}/complete/0", seen
    texts = _column_cells(j, suggested).all_inner_texts()
    assert len(texts) == len(ids) and all(VERDICT.match(t) for t in texts) and texts, texts
    j.shot("suggested-column-filled")

    # -- a column by hand that the demo model can decide ---------------------------------------------------
    name, criteria = ADULTS
    j.add_ai_column(name, criteria)
    _wait_complete(j, name, len(ids))
    counts = _evaluate_counts(j, name, criteria, ids)["counts"]
    assert counts["yes"] >= 1, f"the demo model decided no trial for {criteria!r}: {counts}"
    chip = page.get_by_test_id("ai-column-chip").filter(has_text=name)
    expect(chip.get_by_test_id("ai-column-counts")).to_have_text(
        f"Yes {counts['yes']} · No {counts['no']}"
        + (f" · Conditional {counts['conditional']}" if counts["conditional"] else "")
        + (f" · Needs review {counts['needs_review']}" if counts["needs_review"] else "")
        + f" · Unknown {counts['unknown']}"
        + (f" · Errors {counts['error']}" if counts["error"] else ""))
    j.shot("adults-column")

    # -- Yes only: just the matching rows remain ------------------------------------------------------------
    chip.get_by_test_id("ai-column-filter").select_option("yes")
    expect(rows).to_have_count(counts["yes"])
    expect(page.get_by_test_id("ai-filter-summary")).to_have_text(
        f"Filters show {counts['yes']} of {len(ids)} loaded rows")
    # each Yes says where in the record its evidence is: the trial's age limits, outside the criteria text
    assert set(_column_cells(j, name).all_inner_texts()) == {"Yes (Record details)"}
    kept = rows.evaluate_all("rows => rows.map(r => r.dataset.id)")
    assert kept == [i for i in ids if i in set(kept)] and len(kept) == counts["yes"]
    j.shot("filtered-yes")

    # -- a cell's reasoning and evidence, by keyboard ---------------------------------------------------
    cell = _column_cells(j, name).first
    cell.focus()
    page.keyboard.press("Enter")
    details = page.get_by_test_id("ai-cell-details")
    expect(details).to_be_visible()
    expect(details).to_be_focused()
    expect(details.get_by_test_id("ai-cell-answer")).to_have_text("Yes")
    expect(details.get_by_test_id("ai-cell-reasoning")).to_contain_text("within the required age")
    expect(details.get_by_test_id("ai-cell-evidence").locator("li")).not_to_have_count(0)
    expect(details.get_by_test_id("ai-evidence-section").first).to_have_text("Record details:")
    j.shot("cell-reasoning")
    page.keyboard.press("Escape")
    expect(details).to_have_count(0)
    expect(cell).to_be_focused()

    # -- the chat sees both columns, the filter, the counts and each row's verdict ---------------------------
    with page.expect_request("**/api/chat/stream") as asked:
        page.get_by_test_id("chat-input").fill("How many trials are left?")
        page.get_by_test_id("chat-send").click()
    context = asked.value.post_data_json["context"]
    columns = {c["name"]: c for c in context["ai_columns"]}
    verdicts = columns[name].pop("verdicts")
    assert set(verdicts) == set(ids)
    assert sorted(i for i, v in verdicts.items() if v == "yes") == sorted(kept)  # the rows the Yes filter kept
    assert columns[name] == {
        "name": name, "type": "boolean", "criteria": criteria, "filter_active": True, "filter": "yes",
        "counts": {"yes": counts["yes"], "no": counts["no"], "conditional": counts["conditional"],
                   "needs_review": counts["needs_review"], "unknown": counts["unknown"], "error": counts["error"],
                   "pending": 0},
    }
    assert columns[suggested]["filter_active"] is False and columns[suggested]["filter"] is None
    assert sum(columns[suggested]["counts"].values()) == len(ids)
    # loaded is the rows fetched, shown what the filter keeps: a filter no longer reads as a small search
    assert context["loaded_count"] == len(ids) and context["shown_count"] == counts["yes"]
    expect(j.last_answer()).not_to_have_text("")

    # -- a new page: both columns evaluate the new rows --------------------------------------------------
    chip.get_by_test_id("ai-column-filter").select_option("all")
    expect(rows).to_have_count(len(ids))
    token = search["next_page_token"]
    second = j.api_get("/api/trials/search?" + urlencode({"condition": CONDITION, "page_size": 25,
                                                           "page_token": token}))
    page.get_by_test_id("page-next").click()
    expect(rows).to_have_count(len(second["trials"]))
    for column in (suggested, name):
        _wait_complete(j, column, len(second["trials"]))
    assert all(VERDICT.match(t) for t in _column_cells(j, name).all_inner_texts())
    expect(page.get_by_test_id("page-label")).to_have_text(re.compile(r"^Page 2"))
    j.shot("page-two")
    j.assert_clean()
