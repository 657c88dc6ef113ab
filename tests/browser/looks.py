"""The sizes and colour schemes the journeys run at, and what they check in each state they reach.

A test takes the `look` fixture (conftest.py) and is parametrized over `size` and `scheme` with `LOOKS` (all
four) or `looks(...)` (some of them): the journey's browser context has that viewport (a phone is mobile with
touch) and that system colour scheme. `check` runs in every state a journey reaches: nothing wider than the
screen, axe-core with no serious or critical violation, a screenshot under test-artifacts/browser/<test>/.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page

from tests.browser.axe import assert_accessible
from tests.browser.harness import Journey

DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
SIZES = {"desktop": DESKTOP, "phone": PHONE}
SCHEMES = ("light", "dark")
LOOKS = [pytest.param(size, scheme, id=f"{name}-{scheme}") for name, size in SIZES.items() for scheme in SCHEMES]


def looks(*ids: str) -> list[Any]:
    """Some of the looks, by id ("desktop-light", "phone-dark"…): two complementary ones cover both sizes and
    both schemes at half the time of all four."""
    chosen = [param for param in LOOKS if param.id in ids]
    assert len(chosen) == len(ids), f"unknown look among {ids}"
    return chosen


def context_options(size: dict[str, int], scheme: str) -> dict[str, Any]:
    """Playwright's new_context options for a look (CSP bypassed for axe's script tag)."""
    phone = size is PHONE
    return {"viewport": size, "color_scheme": scheme, "is_mobile": phone, "has_touch": phone, "bypass_csp": True}


def fits(page: Page, state: str) -> None:
    """Nothing is wider than the screen: no sideways scrolling of the page itself."""
    width = page.viewport_size["width"] if page.viewport_size else 0
    scroll = page.evaluate("() => document.scrollingElement.scrollWidth")
    assert scroll <= width, f"{state}: the page is {scroll} px wide on a {width} px screen"


def check(j: Journey, state: str) -> None:
    fits(j.page, state)
    assert_accessible(j.page, state)
    j.shot(state)


def covers_viewport(page: Page, test_id: str) -> None:
    box = page.get_by_test_id(test_id).bounding_box()
    size = page.viewport_size
    assert box and size
    assert (round(box["x"]), round(box["y"]), round(box["width"]), round(box["height"])) == (
        0, 0, size["width"], size["height"]), f"{test_id} is {box}, not the whole {size} screen"


def go(j: Journey, test_id: str) -> None:
    """Follow a header item: on a phone it is behind the Menu button."""
    if j.phone:
        j.page.get_by_test_id("header-menu").click()
    j.page.get_by_test_id(test_id).click()
