"""Journeys with the built-in demo model: TrialScout and Tablizer suggestions accepted, and back after a reload."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.sync_api import expect

from tests.browser.harness import Journey

pytestmark = pytest.mark.browser

TRIAL_QUESTION = "Find Phase 3 immunotherapy trials for NSCLC"
ARTICLE_QUESTION = "Find EGFR resistance articles"

# Records every committed change of the newest answer's text, and when the first card showed up, so the
# test can tell streamed text (several growing texts before the card) from text that arrived all at once.
WATCH_STREAM = """() => {
  const seen = { texts: [], textsBeforeCard: null };
  window.__stream = seen;
  const record = () => {
    const answers = document.querySelectorAll('[data-testid="message-assistant"]');
    const last = answers[answers.length - 1];
    if (!last) return;
    if (seen.textsBeforeCard === null && last.querySelector('section[data-testid^="card-"]')) {
      seen.textsBeforeCard = seen.texts.slice();
    }
    const md = last.querySelector('.markdown');
    const text = md ? md.textContent : '';
    if (text && text !== seen.texts[seen.texts.length - 1]) seen.texts.push(text);
  };
  new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true });
}"""


def _tab_to(journey: Journey, test_id: str, max_tabs: int = 15) -> None:
    """Press Tab from the top of the page until the element with `test_id` has the focus."""
    page = journey.page
    # From the skip link, the page's first stop: after sign-in the focus is on the page's first field, and a
    # blur would leave Chromium's Tab starting point there.
    page.locator(".skip-link").focus()
    for _ in range(max_tabs):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement?.dataset?.testid ?? null") == test_id:
            return
    pytest.fail(f"{test_id} was not reached within {max_tabs} Tab presses")


def test_trialscout_suggestion_streams_fills_the_form_and_survives_reload(demo_journey: Journey) -> None:
    j, page = demo_journey, demo_journey.page
    j.sign_in("/trialscout")
    expect(page.get_by_test_id("trialscout-page")).to_be_visible()
    summary = page.get_by_test_id("results-summary")
    expect(summary).to_have_text("Search ClinicalTrials.gov to fill the table.")

    # Keyboard only: Tab to "Ask Colleague", Enter opens the tray (focus lands in the input); the input is
    # also in the Tab order of the tray, and Enter sends.
    _tab_to(j, "chat-toggle")
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("chat-tray")).to_be_visible()
    expect(page.get_by_test_id("model-label")).to_have_text("demo model")
    chat_input = page.get_by_test_id("chat-input")
    expect(chat_input).to_be_focused()
    # The empty tray's starter prompts come first, then the input.
    expect(page.get_by_test_id("starter-prompt").first).to_be_visible()
    page.get_by_test_id("starter-prompt").last.focus()
    page.keyboard.press("Tab")
    expect(chat_input).to_be_focused()
    j.shot("tray-open")

    page.evaluate(WATCH_STREAM)
    page.keyboard.type(TRIAL_QUESTION)
    page.keyboard.press("Enter")
    expect(chat_input).to_have_value("")
    expect(page.get_by_test_id("message-user")).to_contain_text(TRIAL_QUESTION)

    card = page.get_by_test_id("card-trial_search_suggestion")
    expect(card).to_be_visible()
    answer = j.last_answer()
    expect(answer).to_contain_text("Accept fills the form")
    j.shot("card")

    seen = page.evaluate("() => window.__stream")
    before_card = seen["textsBeforeCard"]
    assert before_card is not None and len(before_card) >= 2, f"the answer did not stream in: {seen}"
    for shorter, longer in zip(before_card, before_card[1:], strict=False):
        assert longer.startswith(shorter) and len(longer) > len(shorter), f"the text did not grow: {seen}"

    expect(card.get_by_test_id("card-field-condition")).to_contain_text("non-small cell lung cancer")
    expect(card.get_by_test_id("card-field-phase")).to_contain_text("Phase 3")
    intervention = card.get_by_test_id("card-field-intervention").locator("dd").inner_text()
    assert intervention.strip()

    with page.expect_response(lambda r: urlsplit(r.url).path == "/api/trials/search") as searched:
        card.get_by_test_id("card-accept").click()
    expect(card.get_by_test_id("card-decision")).to_have_text("✓ Accepted")

    expect(page.get_by_test_id("trial-condition")).to_have_value("non-small cell lung cancer")
    expect(page.get_by_test_id("trial-phase-PHASE3")).to_be_checked()
    for other in ("EARLY_PHASE1", "PHASE1", "PHASE2", "PHASE4"):
        expect(page.get_by_test_id(f"trial-phase-{other}")).not_to_be_checked()
    expect(page.get_by_test_id("trial-intervention")).to_have_value(intervention.strip())

    # The search the page ran is the accepted one, and the page shows what the API answers for it.
    response = searched.value
    assert response.ok
    query = urlsplit(response.url).query
    params = parse_qs(query)
    assert params["condition"] == ["non-small cell lung cancer"]
    assert params["phase"] == ["PHASE3"]
    assert params["intervention"] == [intervention.strip()]
    direct = j.api_get(f"/api/trials/search?{query}")
    assert response.json()["total_count"] == direct["total_count"]
    total = direct["total_count"]
    assert total > 0, "the embedded corpus has phase 3 NSCLC immunotherapy trials"
    noun = "trial" if total == 1 else "trials"  # "1 trial", never "1 trials"
    expect(summary).to_have_text(re.compile(rf"^{total:,} {noun}( · showing 1–{len(direct['trials'])})?$"))
    expect(page.get_by_test_id("result-row")).to_have_count(len(direct["trials"]))
    ids = page.get_by_test_id("result-row").evaluate_all("rows => rows.map(r => r.dataset.id)")
    assert ids == [t["nct_id"] for t in direct["trials"]]
    # An offline status is only true as of its snapshot, and the row says so.
    first = direct["trials"][0]
    expect(page.get_by_test_id("result-row").first).to_contain_text(f"snapshot of {first['snapshot_date']}")
    j.shot("accepted-search")

    # (c) Reload: the conversation reopens from the server with the card's decision.
    conversation_id = j.remembered_conversation("trialscout")
    page.reload()
    expect(page.get_by_test_id("trialscout-page")).to_be_visible()
    j.tray_reopened()
    expect(page.get_by_test_id("message-user").locator(".message-text")).to_have_text(TRIAL_QUESTION)
    expect(j.last_answer()).to_contain_text("Accept fills the form")
    reloaded_card = page.get_by_test_id("card-trial_search_suggestion")
    expect(reloaded_card.get_by_test_id("card-decision")).to_have_text("✓ Accepted")
    expect(reloaded_card.get_by_test_id("card-accept")).to_have_count(0)
    stored = j.api_get(f"/api/conversations/{conversation_id}")
    decisions = [p.get("decision") for m in stored["messages"] for p in (m.get("extras") or {}).get("payloads", [])]
    assert decisions == ["accepted"]
    j.shot("after-reload")
    j.assert_clean()


def test_tablizer_query_suggestion_runs_that_query_and_survives_reload(demo_journey: Journey) -> None:
    j, page = demo_journey, demo_journey.page
    j.sign_in("/tablizer")
    expect(page.get_by_test_id("tablizer-page")).to_be_visible()
    expect(page.get_by_test_id("tablizer-query")).to_have_value("")
    j.open_chat()
    page.get_by_test_id("chat-input").fill(ARTICLE_QUESTION)
    page.get_by_test_id("chat-send").click()

    card = page.get_by_test_id("card-pubmed_query_suggestion")
    expect(card).to_be_visible()
    expect(j.last_answer()).to_contain_text("Accept puts it in the search box")
    query = card.get_by_test_id("card-query").inner_text().strip()
    assert "EGFR" in query
    j.shot("card")

    with page.expect_response(lambda r: urlsplit(r.url).path == "/api/articles/search") as searched:
        card.get_by_test_id("card-accept").click()
    expect(card.get_by_test_id("card-decision")).to_have_text("✓ Accepted")
    expect(page.get_by_test_id("tablizer-query")).to_have_value(query)

    response = searched.value
    assert response.ok
    sent = parse_qs(urlsplit(response.url).query)
    assert sent["q"] == [query]
    total = j.api_get(f"/api/articles/search?{urlencode({'q': query})}")["total_count"]
    assert total > 0, "the offline corpus has EGFR resistance articles"
    page_size = int(sent["page_size"][0])
    first_page = j.api_get(f"/api/articles/search?{urlencode({'q': query, 'page': 1, 'page_size': page_size})}")
    shown = min(total, page_size)
    expect(page.get_by_test_id("results-summary")).to_have_text(f"{total:,} results · showing 1–{shown}")
    rows = page.get_by_test_id("result-row")
    expect(rows).to_have_count(shown)
    assert rows.evaluate_all("rows => rows.map(r => r.dataset.id)") == [a["pmid"] for a in first_page["articles"]]
    j.shot("accepted-search")

    # (c) Reload: the conversation reopens from the server with the card's decision.
    page.reload()
    expect(page.get_by_test_id("tablizer-page")).to_be_visible()
    j.tray_reopened()
    expect(page.get_by_test_id("message-user").locator(".message-text")).to_have_text(ARTICLE_QUESTION)
    reloaded_card = page.get_by_test_id("card-pubmed_query_suggestion")
    expect(reloaded_card.get_by_test_id("card-query")).to_have_text(query)
    expect(reloaded_card.get_by_test_id("card-decision")).to_have_text("✓ Accepted")
    j.shot("after-reload")
    j.assert_clean()
