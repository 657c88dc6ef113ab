"""The admin usage page in Chromium: a turn the admin just had shows up in its tables and chart, and the
CSV export downloads the same rows."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from playwright.sync_api import expect

from backend.demo.wire import Reply
from tests.browser.harness import Journey
from tests.browser.test_streams import _sign_in_as_admin
from tests.fakes.anthropic_server import FakeAnthropic, Script

pytestmark = pytest.mark.browser


def admin_row(report: dict[str, Any]) -> dict[str, Any]:
    return next((g for g in report["by_user"] if g["key"] == "admin"),
                {"turns": 0, "input_tokens": 0, "output_tokens": 0})


def test_usage_page_shows_a_turn_per_user_and_model(scripted_journey: Journey, fake_llm: FakeAnthropic) -> None:
    j, page = scripted_journey, scripted_journey.page
    _sign_in_as_admin(j, "/usage")
    expect(page.get_by_test_id("usage-total")).to_be_visible()
    before = admin_row(j.api_get("/api/admin/usage"))

    page.get_by_test_id("nav-tablizer").click()
    j.open_chat()
    fake_llm.script(Script.answer(Reply.text("Counted.", input_tokens=1000, output_tokens=500)))
    page.get_by_test_id("chat-input").fill("How many?")
    page.get_by_test_id("chat-input").press("Enter")
    expect(j.last_answer()).to_contain_text("Counted.")

    page.get_by_test_id("nav-usage").click()
    report = j.api_get("/api/admin/usage")
    after = admin_row(report)
    assert (after["turns"], after["input_tokens"], after["output_tokens"]) == (
        before["turns"] + 1, before["input_tokens"] + 1000, before["output_tokens"] + 500)
    model = fake_llm.requests[-1]["model"]
    expect(page.get_by_test_id("usage-by-user").locator("tr", has_text="admin")).to_contain_text(
        f"{after['output_tokens']:,}")
    expect(page.get_by_test_id("usage-by-model")).to_contain_text(model)
    expect(page.get_by_test_id("usage-chart")).to_have_attribute("data-ready", "true")
    page.get_by_test_id("usage-metric").select_option("tokens")
    expect(page.get_by_test_id("usage-chart")).to_have_attribute("data-ready", "true")
    j.shot("usage")

    href = page.get_by_test_id("usage-csv").get_attribute("href")
    assert href and href.startswith("/api/admin/usage/export.csv?start=")
    exported = page.request.get(f"{j.app.url}{href}")
    assert exported.ok and exported.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(exported.text())))
    assert sum(int(r["turns"]) for r in rows if r["username"] == "admin") == after["turns"]
    j.assert_clean()


def test_usage_is_for_admins_only(demo_journey: Journey) -> None:
    j, page = demo_journey, demo_journey.page
    j.sign_in("/tablizer")
    expect(page.get_by_test_id("nav-usage")).to_have_count(0)
    assert page.request.get(f"{j.app.url}/api/admin/usage").status == 403
