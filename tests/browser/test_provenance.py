"""Issue 31 item 5 in the browser: each results page names its data's source (the offline sample's size and dates
from GET /api/sources), a search that finds nothing offers looser searches that each find rows, clicking one runs
it, and statuses copied over a year ago are marked. At a desktop and a phone size, in both schemes, with axe."""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any
from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

from tests.browser.harness import Journey
from tests.browser.looks import check, looks

pytestmark = pytest.mark.browser

ACTIVE = {"RECRUITING", "NOT_YET_RECRUITING", "ACTIVE_NOT_RECRUITING", "ENROLLING_BY_INVITATION", "SUSPENDED",
          "AVAILABLE", "TEMPORARILY_NOT_AVAILABLE"}


def _banner(j: Journey, kind: str, noun: str) -> None:
    sample = j.api_get("/api/sources")
    assert sample["mode"] == "offline"
    figures = sample[kind]
    expect(j.page.get_by_test_id("source-banner")).to_contain_text(
        f"Offline sample of {figures['records']:,} {noun}, records as of {figures['snapshot_from']} to "
        f"{figures['snapshot_to']}")


def _articles(j: Journey, query: str) -> int:
    return int(j.api_get(f"/api/articles/search?{urlencode({'q': query, 'page_size': 1})}")["total_count"])


def _trials(j: Journey, **search: Any) -> dict[str, Any]:
    return dict(j.api_get(f"/api/trials/search?{urlencode({**search, 'page_size': 25}, doseq=True)}"))


@pytest.mark.parametrize(("size", "scheme"), looks("desktop-light", "phone-dark"))
def test_a_search_that_finds_nothing_offers_looser_ones_that_do(look: Journey, size: dict, scheme: str) -> None:
    j, page = look, look.page
    j.sign_in("/tablizer")
    _banner(j, "articles", "articles")

    # Tablizer: two terms no article shares. The offers are the looser queries the API finds rows for.
    assert _articles(j, "melanoma pembrolizumab") == 0
    page.get_by_test_id("tablizer-query").fill("melanoma pembrolizumab")
    page.get_by_test_id("tablizer-search").click()
    offers = page.get_by_test_id("looser-search")
    expect(offers.first).to_be_visible()
    expected = {label: n for label, n in (("Drop “melanoma”", _articles(j, "pembrolizumab")),
                                          ("Drop “pembrolizumab”", _articles(j, "melanoma")),
                                          ("Any of the terms", _articles(j, "melanoma OR pembrolizumab"))) if n}
    assert expected, "the offline corpus has melanoma articles"
    expect(offers).to_have_count(len(expected))
    labels = [offer.locator(".looser-label").inner_text() for offer in offers.all()]
    assert labels == list(expected)
    offers.first.scroll_into_view_if_needed()
    check(j, "tablizer-looser-offers")
    offers.filter(has_text="Drop “pembrolizumab”").click()
    melanoma = expected["Drop “pembrolizumab”"]
    expect(page.get_by_test_id("results-summary")).to_have_text(re.compile(rf"^{melanoma:,} results? · showing 1–"))
    expect(page).to_have_url(re.compile(r"[?&]q=melanoma(&|$)"))
    expect(page.get_by_test_id("tablizer-query")).to_have_value("melanoma")
    expect(page.get_by_test_id("looser-searches")).to_have_count(0)

    # TrialScout: a phase and a status no melanoma trial has together; dropping either finds some.
    page.goto("/trialscout")
    _banner(j, "trials", "trials")
    assert _trials(j, condition="melanoma", phase="PHASE4", status="RECRUITING")["total_count"] == 0
    page.get_by_test_id("trial-condition").fill("melanoma")
    page.get_by_test_id("trial-phase-PHASE4").check()
    page.get_by_test_id("trial-status-RECRUITING").check()
    page.get_by_test_id("trial-search").click()
    any_phase = _trials(j, condition="melanoma", status="RECRUITING")
    any_status = _trials(j, condition="melanoma", phase="PHASE4")["total_count"]
    offers = page.get_by_test_id("looser-search")
    expect(offers).to_have_count(int(bool(any_phase["total_count"])) + int(bool(any_status)))
    offers.first.scroll_into_view_if_needed()
    check(j, "trialscout-looser-offers")
    offers.filter(has_text="Any phase").click()
    expect(page.get_by_test_id("results-summary")).to_have_text(
        re.compile(rf"^{any_phase['total_count']:,} trials? · showing 1–"))
    expect(page.get_by_test_id("trial-phase-PHASE4")).not_to_be_checked()

    # Each recruiting row copied over a year ago says its status may be out of date; no other row does.
    year_ago = (date.today() - timedelta(days=365)).isoformat()
    stale = [t["nct_id"] for t in any_phase["trials"]
             if t["status"] in ACTIVE and t.get("snapshot_date") and t["snapshot_date"] < year_ago]
    expect(page.get_by_test_id("result-row")).to_have_count(len(any_phase["trials"]))
    expect(page.get_by_test_id("stale-status")).to_have_count(len(stale))
    for nct_id in stale[:3]:
        expect(page.locator(f"#row-nct-{nct_id}").get_by_test_id("stale-status")).to_contain_text(
            "status may be out of date")
    if stale:
        page.get_by_test_id("stale-status").first.scroll_into_view_if_needed()
    check(j, "trialscout-stale-statuses")

    # Hidden for the session: a reload keeps it hidden.
    page.get_by_test_id("source-banner-hide").click()
    expect(page.get_by_test_id("source-banner")).to_have_count(0)
    page.reload()
    expect(page.get_by_test_id("results-summary")).to_be_visible()
    expect(page.get_by_test_id("source-banner")).to_have_count(0)
    j.assert_clean()
