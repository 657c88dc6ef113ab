"""Issue 15 at 1440×900 with the demo model: Undo on Accept (and what the assistant is told), the view in the
URL across a reload and Back, tool steps in place, message actions, starter prompts."""

from __future__ import annotations

import re
import time
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from tests.browser.harness import Journey

pytestmark = pytest.mark.browser

TRIAL_QUESTION = "Find Phase 3 immunotherapy trials for NSCLC"


def _params(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def _order(answer_html_classes: list[str]) -> list[str]:
    return [c for c in answer_html_classes if c in ("answer-text", "tool-steps")]


def test_accept_undo_url_state_tool_steps_and_message_actions(demo_journey: Journey) -> None:
    j, page = demo_journey, demo_journey.page
    page.set_viewport_size({"width": 1440, "height": 900})
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=j.app.url)
    j.sign_in("/trialscout")
    summary = page.get_by_test_id("results-summary")

    # A search by hand: its filters go to the URL.
    page.get_by_test_id("trial-condition").fill("melanoma")
    page.get_by_test_id("trial-search").click()
    melanoma = j.api_get("/api/trials/search?condition=melanoma&page_size=25")["total_count"]
    expect(summary).to_have_text(re.compile(rf"^{melanoma:,} trials · showing 1–"))
    expect(page).to_have_url(re.compile(r"[?&]cond=melanoma(&|$)"))

    # An empty tray offers the page's starter prompts (from GET /api/pages).
    j.open_chat()
    starters = page.get_by_test_id("starter-prompt")
    expect(starters.first).to_be_visible()
    served = j.api_get("/api/pages")["pages"]["trialscout"]["starter_prompts"]
    assert starters.all_inner_texts() == served
    expect(page).to_have_url(re.compile(r"[?&]chat=1(&|$)"))
    j.shot("starter-prompts")

    page.get_by_test_id("chat-input").fill(TRIAL_QUESTION)
    page.keyboard.press("Enter")
    card = page.get_by_test_id("card-trial_search_suggestion")
    expect(card).to_be_visible()
    card.get_by_test_id("card-accept").click()
    expect(card.get_by_test_id("card-decision")).to_have_text("✓ Accepted")
    expect(page.get_by_test_id("trial-condition")).to_have_value("non-small cell lung cancer")
    expect(summary).not_to_contain_text(f"{melanoma:,} trials")
    counted = re.match(r"^([\d,]+) trials?\b", summary.inner_text())
    assert counted, summary.inner_text()
    accepted_total = int(counted.group(1).replace(",", ""))
    change = re.compile(
        rf"^Replaced 'melanoma' \({melanoma:,}\) → 'non-small cell lung cancer.*' \({accepted_total:,}\)$")
    expect(page.get_by_test_id("accepted-change").locator("span").first).to_have_text(change)
    expect(card.locator("xpath=following-sibling::*[1]").locator("span").first).to_have_text(change)
    j.shot("accepted-with-undo")

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
    page.get_by_test_id("accepted-undo").click()
    expect(page.get_by_test_id("trial-condition")).to_have_value("melanoma")
    expect(summary).to_have_text(re.compile(rf"^{melanoma:,} trials · showing 1–"))
    expect(page.get_by_test_id("accepted-change")).to_have_count(0)
    expect(card.get_by_test_id("accept-undo")).to_have_count(0)
    expect(page.get_by_test_id("accept-note")).to_contain_text("Undone")
    j.shot("undone")

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
    j.shot("tool-step-in-place")

    # Reload: the search, the open tray and its conversation come back from the URL; the step is still in place.
    page.reload()
    expect(page.get_by_test_id("chat-tray")).to_be_visible()
    expect(page.get_by_test_id("trial-condition")).to_have_value("melanoma")
    expect(summary).to_have_text(re.compile(rf"^{melanoma:,} trials · showing 1–"))
    expect(page.get_by_test_id("message-user")).to_have_count(3)
    parts = j.last_answer().evaluate("el => [...el.children].map(c => c.className)")
    assert _order(parts) == ["answer-text", "tool-steps", "answer-text"], parts
    expect(j.last_answer().get_by_test_id("tool-label")).to_have_text(f"Read trial {nct}")
    j.shot("after-reload")

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

    # Back goes to the search before: the accepted one (Undo made its own entry), then the URL restores it.
    page.go_back()
    expect(page.get_by_test_id("trial-condition")).to_have_value("non-small cell lung cancer")
    expect(summary).to_have_text(re.compile(rf"^{accepted_total:,} trials? · "))
    j.shot("back")
    j.assert_clean()


def test_filtered_counts_say_what_the_ai_column_hides_with_clear(demo_journey: Journey) -> None:
    j, page = demo_journey, demo_journey.page
    page.set_viewport_size({"width": 1440, "height": 900})
    j.sign_in("/trialscout")
    page.get_by_test_id("trial-condition").fill("non-small cell lung cancer")
    page.get_by_test_id("trial-search").click()
    rows = page.get_by_test_id("result-row")
    expect(rows.first).to_be_visible()
    loaded = rows.count()
    summary = page.get_by_test_id("results-summary")
    total_text = summary.inner_text().split(" · ")[0]

    page.get_by_test_id("ai-column-add").click()
    page.get_by_test_id("ai-column-name").fill("Adults")
    page.get_by_test_id("ai-column-criteria").fill("Aged 18 years or older")
    page.get_by_test_id("ai-column-add-submit").click()
    progress = page.locator('[data-testid="ai-col-header"][data-name="Adults"] [data-testid="ai-progress"]')
    expect(progress).to_have_attribute("data-status", "complete")
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
    j.shot("filtered")
    notice.get_by_test_id("filter-clear").click()
    expect(rows).to_have_count(loaded)
    expect(page.get_by_test_id("filter-notice")).to_have_count(0)
    expect(summary).to_have_text(re.compile(rf"^{re.escape(total_text)} · showing 1–{loaded}$"))
    j.assert_clean()
