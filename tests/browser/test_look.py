"""Phone and desktop, light and dark, keyboard and axe: the journeys a new user takes, at 1440×900 and
390×844 in both colour schemes, with axe-core on every state they reach (0 serious or critical violations,
no skipped heading levels) and screenshots of each under test-artifacts/browser/<test>/."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Route, expect

from tests.browser.harness import Journey
from tests.browser.looks import LOOKS, PHONE, check, covers_viewport, go

pytestmark = pytest.mark.browser

ARTICLE_QUESTION = "Find EGFR resistance articles"


def _tab_stays_inside(j: Journey, test_id: str, presses: int = 25) -> None:
    """Tab and Shift+Tab never leave a modal sheet (more presses than it has stops: they wrap around)."""
    inside = "(id) => document.querySelector(`[data-testid=${id}]`).contains(document.activeElement)"
    for key in ("Tab", "Shift+Tab"):
        for _ in range(presses):
            j.page.keyboard.press(key)
            assert j.page.evaluate(inside, test_id), f"{key} left {test_id}"


@pytest.mark.parametrize(("size", "scheme"), LOOKS)
def test_pages_tray_and_keyboard_at_each_size_and_theme(look: Journey, size: dict, scheme: str) -> None:
    j, page = look, look.page
    phone = size is PHONE
    page.goto("/tablizer")
    expect(page.get_by_test_id("login-username")).to_be_focused()
    assert page.evaluate("() => document.documentElement.dataset.theme") == scheme  # the system's scheme
    check(j, "login")
    page.get_by_test_id("login-username").fill("demo")
    page.get_by_test_id("login-password").fill("demo")
    page.get_by_test_id("login-password").press("Enter")
    expect(page.get_by_test_id("tablizer-page")).to_be_visible()
    # Signed in: focus is on the page's first field, not dropped to the body.
    page.wait_for_function("() => document.activeElement === document.querySelector("
                           "'#main input, #main select, #main textarea')")
    check(j, "tablizer")

    # The header: everything on screen; on a phone, behind a menu.
    logout = page.get_by_test_id("logout")
    if phone:
        expect(logout).to_be_hidden()
        page.get_by_test_id("header-menu").click()
        expect(page.get_by_test_id("header-menu")).to_have_attribute("aria-expanded", "true")
        check(j, "header-menu-open")
        page.keyboard.press("Escape")
        expect(logout).to_be_hidden()
        expect(page.get_by_test_id("header-menu")).to_be_focused()
        page.get_by_test_id("header-menu").click()
    else:
        expect(page.get_by_test_id("header-menu")).to_be_hidden()
    expect(logout).to_be_visible()
    box = logout.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= size["width"], f"Sign out is off-screen: {box}"
    if phone:
        page.get_by_test_id("header-menu").click()

    # The tray: a full-screen sheet on a phone; an answer with a card; Esc keeps the draft.
    j.open_chat()
    tray = page.get_by_test_id("chat-tray")
    if phone:  # a full-screen sheet: a modal dialog
        covers_viewport(page, "chat-tray")
        expect(tray).to_have_attribute("role", "dialog")
        expect(tray).to_have_attribute("aria-modal", "true")
    else:  # beside the page: a non-modal side tray
        expect(tray).to_have_attribute("role", "complementary")
        assert tray.get_attribute("aria-modal") is None
    page.get_by_test_id("chat-input").fill(ARTICLE_QUESTION)
    page.get_by_test_id("chat-send").click()
    card = page.get_by_test_id("card-pubmed_query_suggestion")
    expect(card).to_be_visible()
    expect(page.get_by_test_id("chat-send")).to_be_visible()  # the answer is complete
    expect(page.get_by_test_id("chat-announcer")).to_contain_text("Colleague answered:")
    check(j, "tray-answer-and-card")

    box_input = page.get_by_test_id("chat-input")
    box_input.fill("a draft to keep")
    box_input.press("Escape")
    expect(page.get_by_test_id("chat-tray")).to_be_focused()
    expect(box_input).to_have_value("a draft to keep")
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("chat-tray")).to_have_count(0)
    j.open_chat()
    expect(page.get_by_test_id("chat-input")).to_have_value("a draft to keep")
    if phone:
        _tab_stays_inside(j, "chat-tray")
    # An empty box: on a phone's sheet Escape closes it at once, focus back on the button that opened it.
    box_input.fill("")
    box_input.press("Escape")
    if phone:
        expect(tray).to_have_count(0)
        expect(page.get_by_test_id("chat-toggle")).to_be_focused()
        j.open_chat()
    else:
        expect(tray).to_be_focused()

    # Accept from the keyboard: focus lands on what was decided.
    card.get_by_test_id("card-accept").focus()
    page.keyboard.press("Enter")
    expect(card.get_by_test_id("card-decision")).to_have_text("✓ Accepted")
    expect(card.get_by_test_id("card-decision")).to_be_focused()
    expect(page.get_by_test_id("result-row").first).to_be_attached()
    page.get_by_test_id("chat-close").click()

    # The detail panel: a full-screen sheet on a phone, so a modal dialog there; Escape gives focus back.
    page.get_by_test_id("row-open").first.click()
    panel = page.get_by_test_id("detail-panel")
    expect(panel).to_be_visible()
    expect(panel).to_have_attribute("aria-modal", "true" if phone else "false")
    if phone:
        covers_viewport(page, "detail-panel")
        _tab_stays_inside(j, "detail-panel")
    check(j, "article-detail")
    page.keyboard.press("Escape")
    expect(panel).to_have_count(0)
    expect(page.get_by_test_id("row-open").first).to_be_focused()

    go(j, "nav-trialscout")
    expect(page.get_by_test_id("trialscout-page")).to_be_visible()
    check(j, "trialscout")

    # The toggle overrides the system's scheme and is remembered.
    other = "light" if scheme == "dark" else "dark"
    if phone:
        page.get_by_test_id("header-menu").click()
    page.get_by_test_id("theme-toggle").click()
    assert page.evaluate("() => document.documentElement.dataset.theme") == other
    page.reload()
    expect(page.get_by_test_id("trialscout-page")).to_be_visible()
    assert page.evaluate("() => document.documentElement.dataset.theme") == other
    background = page.evaluate("() => getComputedStyle(document.documentElement).backgroundColor")
    assert (background == "rgb(18, 21, 26)") == (other == "dark"), background
    check(j, f"trialscout-{other}")
    j.assert_clean()


@pytest.mark.parametrize(("size", "scheme"), LOOKS)
def test_streams_admin_at_each_size_and_theme(look: Journey, size: dict, scheme: str) -> None:
    j, page = look, look.page
    page.goto("/streams")
    page.get_by_test_id("login-username").fill("admin")
    page.get_by_test_id("login-password").fill("admin")
    page.get_by_test_id("login-submit").click()
    expect(page.get_by_test_id("streams-page")).to_be_visible()
    page.get_by_test_id("stream-item").first.click()
    expect(page.get_by_test_id("stream-editor")).to_be_visible()
    check(j, "streams")
    if size is PHONE:  # the list above its editor, the editor the screen's width
        sidebar = page.locator(".streams-sidebar").bounding_box()
        editor = page.get_by_test_id("stream-editor").bounding_box()
        assert sidebar and editor and sidebar["y"] + sidebar["height"] <= editor["y"]
        assert editor["width"] >= size["width"] - 40, editor
    page.get_by_test_id("stream-tab-instructions").click()
    expect(page.get_by_test_id("history-row").first).to_contain_text(re.compile(r"^v\d+"))
    check(j, "streams-instructions")
    j.assert_clean()


def test_switching_app_mid_answer_keeps_the_answer(demo_journey: Journey) -> None:
    """Tablizer → TrialScout → Tablizer while an answer streams: the answer goes on and is whole when back."""
    j, page = demo_journey, demo_journey.page
    j.sign_in("/tablizer")
    j.open_chat()
    page.get_by_test_id("chat-input").fill(ARTICLE_QUESTION)
    page.get_by_test_id("chat-send").click()
    expect(page.get_by_test_id("chat-stop")).to_be_visible()  # streaming
    page.wait_for_function("() => localStorage.getItem('colleague.conversation.tablizer') !== null")
    conversation = j.remembered_conversation("tablizer")
    page.get_by_test_id("nav-trialscout").click()
    expect(page.get_by_test_id("trialscout-page")).to_be_visible()
    expect(page.get_by_test_id("chat-tray")).to_be_visible()
    page.get_by_test_id("nav-tablizer").click()
    expect(page.get_by_test_id("tablizer-page")).to_be_visible()
    answer = j.last_answer()
    expect(answer).to_contain_text("Accept puts it in the search box")
    expect(page.get_by_test_id("card-pubmed_query_suggestion")).to_be_visible()
    expect(page.get_by_test_id("chat-send")).to_be_visible()
    expect(page.get_by_test_id("message-interrupted")).to_have_count(0)
    stored = j.api_get(f"/api/conversations/{conversation}")["messages"][-1]
    assert stored["role"] == "assistant" and stored["status"] == "complete"
    assert "Accept puts it in the search box" in stored["content"]
    j.shot("back-on-tablizer")
    j.assert_clean()


def test_switching_app_before_the_first_event_keeps_the_answer(demo_journey: Journey) -> None:
    """The app is switched before the turn's first event reached the tray (the send is held on its way): back on
    Tablizer, the tray sends it again under the same Idempotency-Key and the answer streams in, remembered."""
    j, page = demo_journey, demo_journey.page
    j.sign_in("/tablizer")
    j.open_chat()
    held: list[Route] = []

    def hold(route: Route) -> None:
        """The first send waits on its way (neither continued nor answered); later ones go through."""
        if held:
            route.continue_()
        else:
            held.append(route)

    page.route("**/api/chat/stream", hold)
    with page.expect_request("**/api/chat/stream") as first:
        page.get_by_test_id("chat-input").fill(ARTICLE_QUESTION)
        page.get_by_test_id("chat-send").click()
    expect(page.get_by_test_id("chat-stop")).to_be_visible()
    assert held and page.evaluate("() => localStorage.getItem('colleague.conversation.tablizer')") is None
    page.get_by_test_id("nav-trialscout").click()
    expect(page.get_by_test_id("trialscout-page")).to_be_visible()
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith("/api/chat/stream")) as second:
        page.get_by_test_id("nav-tablizer").click()
    assert second.value.headers["idempotency-key"] == first.value.headers["idempotency-key"]
    assert second.value.post_data == first.value.post_data
    expect(j.last_answer()).to_contain_text("Accept puts it in the search box")
    expect(page.get_by_test_id("card-pubmed_query_suggestion")).to_be_visible()
    expect(page.get_by_test_id("chat-send")).to_be_visible()
    expect(page).to_have_url(re.compile(r"[?&]c=\d+(&|$)"))
    messages = j.api_get(f"/api/conversations/{j.remembered_conversation('tablizer')}")["messages"]
    assert [(m["role"], m["status"]) for m in messages] == [("user", "complete"), ("assistant", "complete")]
    assert messages[0]["content"] == ARTICLE_QUESTION
    j.shot("answered-after-switching-back")
    j.assert_clean()
