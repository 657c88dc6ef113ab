"""What the browser journeys share: the running app, and a page with its watchers and helpers."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import Locator, Page, expect

LOCAL_HOST = "127.0.0.1"
# Each page's search box and button.
SEARCH_FORMS = {"tablizer": ("tablizer-query", "tablizer-search"), "trialscout": ("trial-condition", "trial-search")}


@dataclass
class LiveApp:
    url: str
    log_path: Path
    process: subprocess.Popen[bytes]

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


def is_local(url: str) -> bool:
    """127.0.0.1, or no network at all (data:, blob:, about:)."""
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about"):
        return True
    return parts.hostname == LOCAL_HOST


@dataclass
class Journey:
    """One test's page with its watchers, screenshots and a few helpers shared by the journeys."""

    page: Page
    app: LiveApp
    shots: Path
    phone: bool = False  # a 390×844 touch screen (the `look` fixture): sheets, and header items behind Menu
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    foreign_requests: list[str] = field(default_factory=list)
    shot_count: int = 0

    def shot(self, name: str) -> Path:
        self.shot_count += 1
        path = self.shots / f"{self.shot_count:02d}-{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def problems(self) -> list[str]:
        return ([f"console error: {e}" for e in self.console_errors]
                + [f"page error: {e}" for e in self.page_errors]
                + [f"request outside {LOCAL_HOST}: {u}" for u in self.foreign_requests])

    def assert_clean(self) -> None:
        problems = self.problems()
        assert not problems, "the browser reported:\n" + "\n".join(problems)

    def api_get(self, path: str) -> Any:
        """GET with the browser context's cookies (the signed-in user)."""
        response = self.page.request.get(f"{self.app.url}{path}")
        assert response.ok, f"GET {path}: {response.status} {response.text()}"
        return response.json()

    def sign_in(self, path: str, username: str = "demo", password: str = "demo") -> None:
        """Open `path` signed out: the app sends us to the login page, and back to `path` after signing in."""
        page = self.page
        page.goto(path)
        expect(page.get_by_test_id("login-username")).to_be_visible()
        assert urlsplit(page.url).path == "/login"
        self.shot("login")
        page.get_by_test_id("login-username").fill(username)
        page.get_by_test_id("login-password").fill(password)
        page.get_by_test_id("login-submit").click()
        expect(page.get_by_test_id("current-user")).to_have_text(username)
        expect(page).to_have_url(f"{self.app.url}{path}")

    def search(self, app: str, text: str) -> Locator:
        """Search `app`'s page (tablizer or trialscout) for `text` by hand; its result rows, once the first shows."""
        box, button = SEARCH_FORMS[app]
        self.page.get_by_test_id(box).fill(text)
        self.page.get_by_test_id(button).click()
        rows = self.page.get_by_test_id("result-row")
        expect(rows.first).to_be_visible()
        return rows

    def ai_column_progress(self, name: str) -> Locator:
        """The progress bar in the header of AI column `name`."""
        return self.page.locator(f'[data-testid="ai-col-header"][data-name="{name}"] [data-testid="ai-progress"]')

    def add_ai_column(self, name: str, criteria: str) -> Locator:
        """Add a yes/no AI column by hand and wait until it has run over the loaded rows; its progress bar."""
        page = self.page
        page.get_by_test_id("ai-column-add").click()
        page.get_by_test_id("ai-column-name").fill(name)
        page.get_by_test_id("ai-column-criteria").fill(criteria)
        page.get_by_test_id("ai-column-type").select_option("boolean")
        page.get_by_test_id("ai-column-add-submit").click()
        progress = self.ai_column_progress(name)
        expect(progress).to_have_attribute("data-status", "complete")
        return progress

    def sign_in_as_admin(self, path: str) -> None:
        """Like `sign_in`, for the admin account (the header labels it "admin (admin)")."""
        page = self.page
        page.goto(path)
        expect(page.get_by_test_id("login-username")).to_be_visible()
        assert urlsplit(page.url).path == "/login"
        page.get_by_test_id("login-username").fill("admin")
        page.get_by_test_id("login-password").fill("admin")
        page.get_by_test_id("login-submit").click()
        expect(page.get_by_test_id("current-user")).to_have_text("admin (admin)")

    def open_chat(self) -> None:
        self.page.get_by_test_id("chat-toggle").click()
        expect(self.page.get_by_test_id("chat-tray")).to_be_visible()
        expect(self.page.get_by_test_id("chat-input")).to_be_focused()

    def tray_reopened(self) -> None:
        """After a reload: the tray is open again by itself (`chat=1` in the URL), its input in reach."""
        expect(self.page.get_by_test_id("chat-tray")).to_be_visible()
        expect(self.page.get_by_test_id("chat-input")).to_be_visible()

    def last_answer(self) -> Locator:
        return self.page.get_by_test_id("message-assistant").last

    def remembered_conversation(self, app: str) -> int:
        raw = self.page.evaluate("(key) => localStorage.getItem(key)", f"colleague.conversation.{app}")
        assert raw, f"no conversation remembered for {app}"
        return int(raw)
