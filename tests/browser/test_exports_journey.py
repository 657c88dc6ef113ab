"""Exports in the browser: TrialScout's table, filtered by an AI column and sorted, downloads as CSV and XLSX
that read back as the table showed it; two selected trials become a report whose PDF lists them; the tray's
conversation downloads as Markdown. Screenshots go to test-artifacts/browser/<test>/."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from openpyxl import load_workbook
from playwright.sync_api import expect
from pypdf import PdfReader

from tests.browser.harness import Journey

pytestmark = pytest.mark.browser

CONDITION = "non-small cell lung cancer"
COLUMN, CRITERIA = "Adults", "Aged 18 years or older"  # the demo model decides it from eligibility ages


def _download(j: Journey, test_id: str, suffix: str) -> Path:
    with j.page.expect_download() as download:
        j.page.get_by_test_id(test_id).click()
    assert download.value.suggested_filename.endswith(suffix), download.value.suggested_filename
    path = download.value.path()
    assert path is not None
    return Path(path)


def test_table_exports_and_a_report_read_back_as_shown(demo_journey: Journey) -> None:
    j, page = demo_journey, demo_journey.page
    j.sign_in("/trialscout")
    rows = j.search("trialscout", CONDITION)
    loaded = rows.count()

    j.add_ai_column(COLUMN, CRITERIA)
    page.get_by_test_id("ai-column-chip").filter(has_text=COLUMN).get_by_test_id("ai-column-filter").select_option("yes")
    page.get_by_test_id("sort-enrollment").click()
    shown_ids = rows.evaluate_all("rows => rows.map(r => r.dataset.id)")
    assert 0 < len(shown_ids) <= loaded
    cells = page.locator(f'[data-testid="ai-cell"][data-column="{COLUMN}"]').all_inner_texts()
    assert set(cells) == {"Yes (Record details)"}  # the verdict, and where in the record its evidence is
    verdicts = [c.removesuffix(" (Record details)") for c in cells]

    page.get_by_test_id("export-menu").locator("summary").click()
    j.shot("export-menu")
    table = list(csv.reader(io.StringIO(_download(j, "export-csv", ".csv").read_text("utf-8-sig"))))
    header, body = table[0], table[1:]
    assert header[0] == "NCT ID" and COLUMN in header
    assert [r[0] for r in body] == shown_ids  # the filter and the sort, as shown
    assert [r[header.index(COLUMN)] for r in body] == verdicts
    assert all(r[header.index(f"{COLUMN}: reasoning")] for r in body)
    assert all(r[header.index(f"{COLUMN}: evidence")].startswith("[Record details] ") for r in body)
    expect(page.get_by_test_id("export-status")).to_have_text(f"Downloaded {len(shown_ids)} "
                                                               f"{'row' if len(shown_ids) == 1 else 'rows'} as CSV.")

    sheet = load_workbook(io.BytesIO(_download(j, "export-xlsx", ".xlsx").read_bytes())).active
    assert sheet is not None
    values = [list(r) for r in sheet.iter_rows(values_only=True)]
    assert [str(v) for v in values[0]] == header
    assert [r[0] for r in values[1:]] == shown_ids
    assert [r[header.index(COLUMN)] for r in values[1:]] == verdicts

    # -- a report of two selected trials --------------------------------------------------------------------
    page.get_by_test_id("results-summary").click()  # a click outside closes the menu
    expect(page.get_by_test_id("export-csv")).to_be_hidden()
    chosen = shown_ids[:2]
    for nct in chosen:
        page.get_by_label(f"Select {nct}").check()
    page.get_by_test_id("charts-toggle").click()  # the panel opens with its first chart (the data's pick)
    expect(page.get_by_test_id("charts-panel").locator(".chart").first).to_be_visible()
    page.get_by_test_id("chart-facet").select_option("phase")  # a pinned Phase chart joins the report
    page.get_by_test_id("chart-add").click()
    expect(page.get_by_test_id("charts-panel").locator(".chart[data-facet='phase']").first).to_be_visible()
    shown = page.get_by_test_id("charts-panel").locator(".chart[data-facet]")
    # The report redraws each pinned chart over the selected rows: the panel's first pick and Phase.
    pinned = {shown.nth(i).get_attribute("data-facet") for i in range(shown.count())}
    drawn = pinned & {"phase", "status", "start_year", "sponsor"}  # the trial facets a report knows
    assert "phase" in drawn
    page.get_by_test_id("export-menu").locator("summary").click()
    page.get_by_test_id("report-title").fill("Adult NSCLC shortlist")
    page.get_by_test_id("build-report").click()
    expect(page.get_by_test_id("report-html")).to_be_visible()
    expect(page.get_by_test_id("export-status")).to_have_text(f"Report ready: {len(chosen)} "
                                                               f"{'row' if len(chosen) == 1 else 'rows'}.")
    j.shot("report-ready")
    pdf_url = page.get_by_test_id("report-pdf").get_attribute("href")
    assert pdf_url
    pdf = page.request.get(pdf_url)
    assert pdf.ok and pdf.body().startswith(b"%PDF")
    text = " ".join(" ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf.body())).pages).split())
    assert "Adult NSCLC shortlist" in text
    for nct in chosen:
        assert nct in text
    html_url = page.get_by_test_id("report-html").get_attribute("href")
    assert html_url
    report = page.context.new_page()
    report.goto(html_url)
    expect(report.locator("h1")).to_have_text("Adult NSCLC shortlist")
    expect(report.locator("table.shortlist tbody tr")).to_have_count(len(chosen))
    expect(report.locator("figure svg")).to_have_count(len(drawn))  # the panel's charts, from its figures
    report.screenshot(path=str(j.shots / "report-html.png"), full_page=True)
    report.close()
    j.assert_clean()


def test_conversation_downloads_as_markdown(demo_journey: Journey) -> None:
    j, page = demo_journey, demo_journey.page
    j.sign_in("/trialscout")
    j.open_chat()
    page.get_by_test_id("chat-input").fill("Find recruiting melanoma trials")
    page.get_by_test_id("chat-send").click()
    expect(page.get_by_test_id("conversation-export")).to_be_visible()
    page.get_by_test_id("conversation-export").locator("summary").click()
    text = _download(j, "export-markdown", ".md").read_text("utf-8")
    assert "> Find recruiting melanoma trials" in text
    assert "## Colleague" in text
    j.assert_clean()
