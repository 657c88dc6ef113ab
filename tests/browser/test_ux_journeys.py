"""Issue 15 with the demo model: Undo on Accept (and what the assistant is told), the view in the URL across a
reload and Back, tool steps in place, message actions, starter prompts, filtered counts with Clear.

Every journey runs at two complementary looks (tests/browser/looks.py), so each item is checked at 1440×900
and 390×844 and in the light and the dark scheme, with axe-core and a screenshot in each state it reaches.
On a phone the tray and the detail panel are full-screen sheets and the page is behind them: the journeys
close the sheet to use the page, and Undo from the note under the card instead of the one beside the table.
"""

from __future__ import annotations

import re
import time
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.sync_api import Locator, expect

from tests.browser.harness import Journey
from tests.browser.looks import check, covers_viewport, looks

pytestmark = pytest.mark.browser

TRIAL_QUESTION = "Find Phase 3 immunotherapy trials for NSCLC"
ARTICLE_QUESTION = "Find EGFR resistance articles"
HAND_QUERY = "breast cancer"  # 154 articles in the offline corpus, 49 since 2015: a second page either way
# Each journey at one desktop and one phone look, in opposite schemes; the two journeys swap them, so Undo and
# the URL's view (in both) are seen in all four looks.
TRIALSCOUT_LOOKS = looks("desktop-light", "phone-dark")
TABLIZER_LOOKS = looks("desktop-dark", "phone-light")


def _params(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def _order(answer_html_classes: list[str]) -> list[str]:
    return [c for c in answer_html_classes if c in ("answer-text", "tool-steps")]


def _open_chat_on_starter_prompts(j: Journey, app: str) -> None:
    """An empty tray offers the page's starter prompts (from GET /api/pages); the tray is in the URL."""
    j.open_chat()
    starters = j.page.get_by_test_id("starter-prompt")
    expect(starters.first).to_be_visible()
    assert starters.all_inner_texts() == j.api_get("/api/pages")["pages"][app]["starter_prompts"]
    expect(j.page).to_have_url(re.compile(r"[?&]chat=1(&|$)"))
    if j.phone:
        covers_viewport(j.page, "chat-tray")
    check(j, "starter-prompts")


def _ask_and_accept(j: Journey, question: str, payload_type: str) -> Locator:
    """Ask the demo model for a search and Accept the card it answers with."""
    j.page.get_by_test_id("chat-input").fill(question)
    j.page.keyboard.press("Enter")
    card = j.page.get_by_test_id(f"card-{payload_type}")
    expect(card).to_be_visible()
    card.get_by_test_id("card-accept").click()
    expect(card.get_by_test_id("card-decision")).to_have_text("✓ Accepted")
    return card


def _undo_accepted(j: Journey) -> None:
    """Undo the accepted card: beside the table on a desktop; under the card on a phone (the page is behind
    the tray), then close the tray to see the page."""
    page = j.page
    if j.phone:
        page.get_by_test_id("accept-undo").click()
        expect(page.get_by_test_id("accept-note")).to_contain_text("Undone")
        page.get_by_test_id("chat-close").click()
        expect(page.get_by_test_id("chat-tray")).to_have_count(0)
        expect(page.get_by_test_id("chat-toggle")).to_be_focused()
    else:
        page.get_by_test_id("accepted-undo").click()
        expect(page.get_by_test_id("accept-note")).to_contain_text("Undone")
    expect(page.get_by_test_id("accepted-change")).to_have_count(0)
    expect(page.get_by_test_id("accept-undo")).to_have_count(0)


@pytest.mark.parametrize(("size", "scheme"), TRIALSCOUT_LOOKS)
def test_trialscout_accept_undo_url_state_tool_steps_and_message_actions(look: Journey, size: dict,
                                                                         scheme: str) -> None:
    j, page = look, look.page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=j.app.url)
    j.sign_in("/trialscout")
    summary = page.get_by_test_id("results-summary")

    # A search by hand: its filters go to the URL.
    page.get_by_test_id("trial-condition").fill("melanoma")
    page.get_by_test_id("trial-search").click()
    melanoma = j.api_get("/api/trials/search?condition=melanoma&page_size=25")["total_count"]
    expect(summary).to_have_text(re.compile(rf"^{melanoma:,} trials · showing 1–"))
    expect(page).to_have_url(re.compile(r"[?&]cond=melanoma(&|$)"))

    _open_chat_on_starter_prompts(j, "trialscout")
    card = _ask_and_accept(j, TRIAL_QUESTION, "trial_search_suggestion")
    expect(page.get_by_test_id("trial-condition")).to_have_value("non-small cell lung cancer")
    expect(summary).not_to_contain_text(f"{melanoma:,} trials")
    counted = re.match(r"^([\d,]+) trials?\b", summary.inner_text())
    assert counted, summary.inner_text()
    accepted_total = int(counted.group(1).replace(",", ""))
    change = re.compile(
        rf"^Replaced 'melanoma' \({melanoma:,}\) → 'non-small cell lung cancer.*' \({accepted_total:,}\)$")
    expect(page.get_by_test_id("accepted-change").locator("span").first).to_have_text(change)
    expect(card.locator("xpath=following-sibling::*[1]").locator("span").first).to_have_text(change)
    check(j, "accepted-with-undo")

    # The next turn tells the assistant what the accepted search found, beside what it replaced.
    page.get_by_test_id("chat-input").fill("Thanks, what changed?")
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("message-user")).to_have_count(2)
    expect(page.get_by_test_id("chat-send")).to_be_visible()
    expect(page).to_have_url(re.compile(r"[?&]c=\d+(&|$)"))
    conversation = int(_params(page.url)["c"][0])
    stored = j.api_get(f"/api/conversations/{conversation}")["messages"]
    last_accepted = [m for m in stored if m["role"] == "user"][-1]["context"]["last_accepted"]
    assert last_accepted["type"] == "trial_search_suggestion"
    assert last_accepted["query"].startswith("non-small cell lung cancer")
    assert (last_accepted["result_count"], last_accepted["previous_query"], last_accepted["previous_result_count"]) == (
        accepted_total, "melanoma", melanoma)

    # Undo puts the page back as it was before the card.
    _undo_accepted(j)
    expect(page.get_by_test_id("trial-condition")).to_have_value("melanoma")
    expect(summary).to_have_text(re.compile(rf"^{melanoma:,} trials · showing 1–"))
    check(j, "undone")
    if j.phone:  # back to the conversation, from the URL-less tray: the app remembers it
        j.open_chat()
        expect(page.get_by_test_id("message-user")).to_have_count(2)
        expect(page).to_have_url(re.compile(rf"[?&]c={conversation}(&|$)"))

    # A tool step sits where the call happened: after "Let me pull up …", before the summary it led to.
    nct = page.get_by_test_id("result-row").first.get_attribute("data-id")
    page.get_by_test_id("chat-input").fill(f"Tell me about {nct}")
    page.keyboard.press("Enter")
    step = j.last_answer().get_by_test_id("tool-activity")
    expect(step.get_by_test_id("tool-label")).to_have_text(f"Read trial {nct}")
    expect(step).to_contain_text(" · '")  # the trial's title, from the tool's result
    expect(page.get_by_test_id("chat-send")).to_be_visible()
    parts = j.last_answer().evaluate("el => [...el.children].map(c => c.className)")
    assert _order(parts) == ["answer-text", "tool-steps", "answer-text"], parts
    expect(j.last_answer().locator(".answer-text").first).to_contain_text(f"Let me pull up {nct}")
    check(j, "tool-step-in-place")

    # Reload: the search, the open tray and its conversation come back from the URL; the step is still in place.
    page.reload()
    j.tray_reopened()
    expect(page.get_by_test_id("trial-condition")).to_have_value("melanoma")
    expect(summary).to_have_text(re.compile(rf"^{melanoma:,} trials · showing 1–"))
    expect(page.get_by_test_id("message-user")).to_have_count(3)
    parts = j.last_answer().evaluate("el => [...el.children].map(c => c.className)")
    assert _order(parts) == ["answer-text", "tool-steps", "answer-text"], parts
    expect(j.last_answer().get_by_test_id("tool-label")).to_have_text(f"Read trial {nct}")
    check(j, "after-reload")

    # Copy as Markdown: the clipboard holds the answer's text.
    answer_text = next(m["content"] for m in reversed(j.api_get(f"/api/conversations/{conversation}")["messages"]))
    j.last_answer().get_by_test_id("message-copy").click()
    expect(j.last_answer().get_by_test_id("message-copy")).to_have_text("Copied")
    assert page.evaluate("() => navigator.clipboard.readText()") == answer_text

    # Edit and resend the last question (ArrowUp in the empty box): it and its answer are replaced.
    chat_input = page.get_by_test_id("chat-input")
    chat_input.focus()
    page.keyboard.press("ArrowUp")
    expect(chat_input).to_have_value(f"Tell me about {nct}")
    expect(page.get_by_test_id("chat-editing")).to_be_visible()
    chat_input.fill(f"Tell me about {nct}, briefly")
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("message-user").last).to_contain_text("briefly")
    expect(page.get_by_test_id("message-user")).to_have_count(3)
    expect(page.get_by_test_id("chat-send")).to_be_visible()
    users = [m["content"] for m in j.api_get(f"/api/conversations/{conversation}")["messages"] if m["role"] == "user"]
    assert users == [TRIAL_QUESTION, "Thanks, what changed?", f"Tell me about {nct}, briefly"]

    # Regenerate the last answer: the same question, a fresh answer, no extra messages.
    # (SQLite may give the new rows the dropped rows' ids: the turn id tells the answers apart.)
    before = j.api_get(f"/api/conversations/{conversation}")["messages"][-1]["extras"]["turn_id"]
    j.last_answer().get_by_test_id("message-regenerate").click()
    deadline = time.monotonic() + 20
    while True:
        messages = j.api_get(f"/api/conversations/{conversation}")["messages"]
        last = messages[-1]
        if len(messages) == 6 and last["extras"].get("turn_id") != before and last["status"] == "complete":
            break
        assert time.monotonic() < deadline, f"no regenerated answer: {messages[-1]}"
        time.sleep(0.2)
    expect(page.get_by_test_id("chat-send")).to_be_visible()
    expect(j.last_answer().get_by_test_id("tool-label")).to_have_text(f"Read trial {nct}")
    assert [m["role"] for m in messages] == ["user", "assistant"] * 3
    assert messages[-2]["content"] == f"Tell me about {nct}, briefly"
    check(j, "message-actions")

    # Back goes to the search before: the accepted one (Undo made its own entry), then the URL restores it.
    page.go_back()
    expect(page.get_by_test_id("trial-condition")).to_have_value("non-small cell lung cancer")
    expect(summary).to_have_text(re.compile(rf"^{accepted_total:,} trials? · "))
    check(j, "back")
    j.assert_clean()


@pytest.mark.parametrize(("size", "scheme"), TABLIZER_LOOKS)
def test_tablizer_accept_undo_and_the_view_in_the_url(look: Journey, size: dict, scheme: str) -> None:
    j, page = look, look.page
    j.sign_in("/tablizer")
    summary = page.get_by_test_id("results-summary")
    query_box = page.get_by_test_id("tablizer-query")

    # A search by hand: its query goes to the URL.
    query_box.fill(HAND_QUERY)
    page.get_by_test_id("tablizer-search").click()
    hand = j.api_get(f"/api/articles/search?{urlencode({'q': HAND_QUERY, 'page_size': 25})}")["total_count"]
    expect(summary).to_have_text(f"{hand:,} results · showing 1–25")
    expect(page).to_have_url(re.compile(r"[?&]q=breast\+cancer(&|$)"))

    _open_chat_on_starter_prompts(j, "tablizer")

    # The demo model's PubMed query card: Accept runs it, and says what it replaced.
    card = _ask_and_accept(j, ARTICLE_QUESTION, "pubmed_query_suggestion")
    query = card.get_by_test_id("card-query").inner_text().strip()
    expect(query_box).to_have_value(query)
    total = j.api_get(f"/api/articles/search?{urlencode({'q': query, 'page_size': 25})}")["total_count"]
    expect(summary).to_have_text(f"{total:,} results · showing 1–{min(total, 25)}")
    change = re.compile(rf"^Replaced '{HAND_QUERY}' \({hand:,}\) → '.+' \({total:,}\)$")
    expect(page.get_by_test_id("accepted-change").locator("span").first).to_have_text(change)
    expect(page.get_by_test_id("accept-note").locator("span").first).to_have_text(change)
    check(j, "accepted-with-undo")

    # Undo: the query and its count as they were.
    _undo_accepted(j)
    expect(query_box).to_have_value(HAND_QUERY)
    expect(summary).to_have_text(f"{hand:,} results · showing 1–25")
    check(j, "undone")

    # The rest of the view: a date filter, the sort, the second page, an open article (on a phone the tray is
    # closed: the page and its detail sheet are what is on screen).
    page.get_by_test_id("tablizer-date-start").fill("2015-01-01")
    page.get_by_test_id("tablizer-sort").select_option("date")
    page.get_by_test_id("tablizer-search").click()
    expect(page).to_have_url(re.compile(r"[?&]from=2015-01-01(&|$)"))
    filtered = j.api_get("/api/articles/search?" + urlencode(
        {"q": HAND_QUERY, "date_start": "2015-01-01", "sort": "date", "page_size": 25}))
    expect(summary).to_have_text(re.compile(rf"^{filtered['total_count']:,} results · showing 1–25$"))
    rows = page.get_by_test_id("result-row")
    first_page_top = rows.first.get_attribute("data-id")
    page.get_by_test_id("page-next").click()
    expect(summary).to_have_text(re.compile(r" · showing 26–"))
    expect(page.get_by_test_id("page-label")).to_have_text(re.compile(r"^Page 2\b"))
    expect(rows.first).not_to_have_attribute("data-id", first_page_top or "")
    second_page = rows.evaluate_all("rows => rows.map(r => r.dataset.id)")
    page.get_by_test_id("row-open").first.click()
    panel = page.get_by_test_id("detail-panel")
    expect(panel).to_have_attribute("aria-label", f"PMID {second_page[0]}")
    view = _params(page.url)
    assert {k: view.get(k) for k in ("q", "from", "sort", "page", "open")} == {
        "q": [HAND_QUERY], "from": ["2015-01-01"], "sort": ["date"], "page": ["2"], "open": [second_page[0]]}
    assert ("chat" in view) == (not j.phone)
    check(j, "view-before-reload")

    def restored() -> None:
        expect(panel).to_have_attribute("aria-label", f"PMID {second_page[0]}")
        expect(query_box).to_have_value(HAND_QUERY)
        expect(page.get_by_test_id("tablizer-date-start")).to_have_value("2015-01-01")
        expect(page.get_by_test_id("tablizer-sort")).to_have_value("date")
        expect(page.get_by_test_id("page-label")).to_have_text(re.compile(r"^Page 2\b"))
        expect(rows.first).to_have_attribute("data-id", second_page[0])
        assert rows.evaluate_all("rows => rows.map(r => r.dataset.id)") == second_page

    # Reload: all of it comes back from the URL, with the tray and its conversation where it was open.
    page.reload()
    restored()
    if j.phone:  # the article's sheet is on screen; closing it, the tray opens on the same conversation
        covers_viewport(page, "detail-panel")
        check(j, "after-reload-article")
        page.get_by_test_id("detail-close").click()
        j.open_chat()
        expect(page.get_by_test_id("message-user")).to_have_count(1)
        page.reload()
    j.tray_reopened()
    expect(page.get_by_test_id("message-user")).to_have_count(1)
    expect(page.get_by_test_id("card-pubmed_query_suggestion").get_by_test_id("card-decision")).to_have_text(
        "✓ Accepted")
    expect(page.get_by_test_id("accept-note")).to_have_count(0)  # Undo belonged to the page before the reload
    check(j, "after-reload")
    j.assert_clean()


@pytest.mark.parametrize(("size", "scheme"), TABLIZER_LOOKS)
def test_filtered_counts_say_what_the_ai_column_hides_with_clear(look: Journey, size: dict, scheme: str) -> None:
    j, page = look, look.page
    j.sign_in("/trialscout")
    rows = j.search("trialscout", "non-small cell lung cancer")
    loaded = rows.count()
    summary = page.get_by_test_id("results-summary")
    total_text = summary.inner_text().split(" · ")[0]

    j.add_ai_column("Adults", "Aged 18 years or older")
    chip = page.get_by_test_id("ai-column-chip").filter(has_text="Adults")
    counts = dict(re.findall(r"(Yes|No|Unknown) (\d+)", chip.get_by_test_id("ai-column-counts").inner_text()))
    # The filter that hides the most rows (all of them when a verdict never came up).
    verdict = min(("Yes", "No", "Unknown"), key=lambda v: int(counts.get(v, 0)))
    kept = int(counts.get(verdict, 0))
    chip.get_by_test_id("ai-column-filter").select_option(verdict.lower())
    expect(rows).to_have_count(kept)
    expect(summary).to_have_text(
        f"{total_text} · 1–{loaded} loaded · {kept} of {loaded} match the AI column filters")
    notice = page.get_by_test_id("filter-notice")
    noun = lambda n: f"{n} trial" + ("" if n == 1 else "s")  # noqa: E731
    expect(notice).to_contain_text(
        f"None of the {noun(loaded)} loaded match the AI column filter." if kept == 0
        else f"AI column filter hides {noun(loaded - kept)}.")
    check(j, "filtered")
    notice.get_by_test_id("filter-clear").click()
    expect(rows).to_have_count(loaded)
    expect(page.get_by_test_id("filter-notice")).to_have_count(0)
    expect(summary).to_have_text(re.compile(rf"^{re.escape(total_text)} · showing 1–{loaded}$"))
    check(j, "cleared")
    j.assert_clean()
