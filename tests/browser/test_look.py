"""Phone and desktop, light and dark, keyboard and axe: the journeys a new user takes, at 1440×900 and
390×844 in both colour schemes, with axe-core on every state they reach (0 serious or critical violations,
no skipped heading levels) and screenshots of each under test-artifacts/browser/<test>/."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.axe import assert_accessible
from tests.browser.conftest import _make_journey
from tests.browser.harness import Journey, LiveApp

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
LOOKS = [pytest.param(size, scheme, id=f"{name}-{scheme}")
         for name, size in (("desktop", DESKTOP), ("phone", PHONE)) for scheme in ("light", "dark")]
ARTICLE_QUESTION = "Find EGFR resistance articles"


@pytest.fixture
def look(request: pytest.FixtureRequest, browser: Browser, demo_app: LiveApp) -> Iterator[Journey]:
    size, scheme = request.node.callspec.params["size"], request.node.callspec.params["scheme"]
    yield from _make_journey(request, browser, demo_app, viewport=size, color_scheme=scheme,
                             is_mobile=size is PHONE, has_touch=size is PHONE, bypass_csp=True)  # axe's script tag


def _fits(page: Page, state: str) -> None:
    """Nothing is wider than the screen: no sideways scrolling of the page itself."""
    width = page.viewport_size["width"] if page.viewport_size else 0
    scroll = page.evaluate("() => document.scrollingElement.scrollWidth")
    assert scroll <= width, f"{state}: the page is {scroll} px wide on a {width} px screen"


def _check(j: Journey, state: str) -> None:
    _fits(j.page, state)
    assert_accessible(j.page, state)
    j.shot(state)


def _covers_viewport(page: Page, test_id: str) -> None:
    box = page.get_by_test_id(test_id).bounding_box()
    size = page.viewport_size
    assert box and size
    assert (round(box["x"]), round(box["y"]), round(box["width"]), round(box["height"])) == (
        0, 0, size["width"], size["height"]), f"{test_id} is {box}, not the whole {size} screen"


def _go(j: Journey, test_id: str, phone: bool) -> None:
    """Follow a header item: on a phone it is behind the Menu button."""
    if phone:
        j.page.get_by_test_id("header-menu").click()
    j.page.get_by_test_id(test_id).click()


@pytest.mark.parametrize(("size", "scheme"), LOOKS)
def test_pages_tray_and_keyboard_at_each_size_and_theme(look: Journey, size: dict, scheme: str) -> None:
    j, page = look, look.page
    phone = size is PHONE
    page.goto("/tablizer")
    expect(page.get_by_test_id("login-username")).to_be_focused()
    assert page.evaluate("() => document.documentElement.dataset.theme") == scheme  # the system's scheme
    _check(j, "login")
    page.get_by_test_id("login-username").fill("demo")
    page.get_by_test_id("login-password").fill("demo")
    page.get_by_test_id("login-password").press("Enter")
    expect(page.get_by_test_id("tablizer-page")).to_be_visible()
    # Signed in: focus is on the page's first field, not dropped to the body.
    page.wait_for_function("() => document.activeElement === document.querySelector("
                           "'#main input, #main select, #main textarea')")
    _check(j, "tablizer")

    # The header: everything on screen; on a phone, behind a menu.
    logout = page.get_by_test_id("logout")
    if phone:
        expect(logout).to_be_hidden()
        page.get_by_test_id("header-menu").click()
        expect(page.get_by_test_id("header-menu")).to_have_attribute("aria-expanded", "true")
        _check(j, "header-menu-open")
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
    if phone:
        _covers_viewport(page, "chat-tray")
    page.get_by_test_id("chat-input").fill(ARTICLE_QUESTION)
    page.get_by_test_id("chat-send").click()
    card = page.get_by_test_id("card-pubmed_query_suggestion")
    expect(card).to_be_visible()
    expect(page.get_by_test_id("chat-send")).to_be_visible()  # the answer is complete
    expect(page.get_by_test_id("chat-announcer")).to_contain_text("Colleague answered:")
    _check(j, "tray-answer-and-card")

    box_input = page.get_by_test_id("chat-input")
    box_input.fill("a draft to keep")
    box_input.press("Escape")
    expect(page.get_by_test_id("chat-tray")).to_be_focused()
    expect(box_input).to_have_value("a draft to keep")
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("chat-tray")).to_have_count(0)
    j.open_chat()
    expect(page.get_by_test_id("chat-input")).to_have_value("a draft to keep")

    # Accept from the keyboard: focus lands on what was decided.
    card.get_by_test_id("card-accept").focus()
    page.keyboard.press("Enter")
    expect(card.get_by_test_id("card-decision")).to_have_text("✓ Accepted")
    expect(card.get_by_test_id("card-decision")).to_be_focused()
    expect(page.get_by_test_id("result-row").first).to_be_attached()
    page.get_by_test_id("chat-close").click()

    # The detail panel: a full-screen sheet on a phone.
    page.get_by_test_id("row-open").first.click()
    expect(page.get_by_test_id("detail-panel")).to_be_visible()
    if phone:
        _covers_viewport(page, "detail-panel")
    _check(j, "article-detail")
    page.get_by_test_id("detail-close").click()

    _go(j, "nav-trialscout", phone)
    expect(page.get_by_test_id("trialscout-page")).to_be_visible()
    _check(j, "trialscout")

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
    _check(j, f"trialscout-{other}")
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
    _check(j, "streams")
    if size is PHONE:  # the list above its editor, the editor the screen's width
        sidebar = page.locator(".streams-sidebar").bounding_box()
        editor = page.get_by_test_id("stream-editor").bounding_box()
        assert sidebar and editor and sidebar["y"] + sidebar["height"] <= editor["y"]
        assert editor["width"] >= size["width"] - 40, editor
    page.get_by_test_id("stream-tab-instructions").click()
    expect(page.get_by_test_id("history-row").first).to_contain_text(re.compile(r"^v\d+"))
    _check(j, "streams-instructions")
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
