"""Browser journeys: the REAL app as a subprocess, driven by Playwright in Debian's Chromium.

Each app is `python -m backend migrate` + `python -m backend serve` on a free port with a fresh SQLite file
(COLLEAGUE_DEMO=1 seeds demo/demo and admin/admin; offline sources). `demo_app` answers with the built-in
demo model; `scripted_app` talks to the session's scripted fake Messages API (tests script it through
`fake_llm`). Every journey gets a fresh browser context and a `Journey` that fails the test on any console
error, page error or request to a host other than 127.0.0.1, and saves its screenshots under
test-artifacts/browser/<test name>/.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, ConsoleMessage, expect, sync_playwright

from tests.browser.harness import LOCAL_HOST, Journey, LiveApp, is_local
from tests.browser.looks import PHONE, context_options
from tests.fakes.anthropic_server import FakeAnthropic
from tests.live_server import stop

ROOT = Path(__file__).resolve().parents[2]
DIST_INDEX = ROOT / "frontend" / "dist" / "index.html"
ARTIFACTS = ROOT / "test-artifacts" / "browser"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
TIMEOUT_MS = 15_000  # generous for a loaded 2-core machine; every wait is an auto-wait, never a sleep
STARTUP_TIMEOUT_S = 60

expect.set_options(timeout=TIMEOUT_MS)


# ---- the app under test ---------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOCAL_HOST, 0))
        return int(sock.getsockname()[1])


def _app_env(db_path: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ANTHROPIC_", "COLLEAGUE_")) and k != "DATABASE_URL"}
    env.update({
        "DATABASE_URL": f"sqlite:///{db_path}",
        "COLLEAGUE_DEMO": "1",
        "COLLEAGUE_SOURCES": "offline",
        "COLLEAGUE_DEMO_DELAY_MS": "20",
        "PYTHONUNBUFFERED": "1",
    })
    env.update(extra)
    return env


def _wait_healthy(app: LiveApp) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if app.process.poll() is not None:
            pytest.fail(f"the app exited with {app.process.returncode} while starting:\n{app.log_tail()}")
        try:
            with urllib.request.urlopen(f"{app.url}/api/health", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.1)  # polling the subprocess until it listens; not a wait inside the browser
    pytest.fail(f"the app did not answer /api/health within {STARTUP_TIMEOUT_S}s:\n{app.log_tail()}")


def _start_app(workdir: Path, extra_env: dict[str, str]) -> Iterator[LiveApp]:
    if not DIST_INDEX.is_file():
        pytest.fail(f"{DIST_INDEX.relative_to(ROOT)} is missing: the browser tests drive the built frontend. "
                    "Run `make test` (it builds the frontend first).")
    env = _app_env(workdir / "colleague.db", extra_env)
    migrate = subprocess.run([sys.executable, "-m", "backend", "migrate"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=120)
    if migrate.returncode:
        pytest.fail(f"`python -m backend migrate` failed:\n{migrate.stdout}\n{migrate.stderr}")
    port = _free_port()
    log_path = workdir / "server.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "backend", "serve", "--host", LOCAL_HOST, "--port",
                                    str(port)], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    app = LiveApp(url=f"http://{LOCAL_HOST}:{port}", log_path=log_path, process=process)
    try:
        _wait_healthy(app)
        yield app
    finally:
        stop(process, timeout=15)


@pytest.fixture(scope="package")
def demo_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveApp]:
    """The app answering with the built-in demo model (no API key)."""
    yield from _start_app(tmp_path_factory.mktemp("demo_app"), {})


@pytest.fixture(scope="package")
def scripted_app(tmp_path_factory: pytest.TempPathFactory, fake_server: FakeAnthropic) -> Iterator[LiveApp]:
    """The app talking to the scripted fake Messages API through the real SDK."""
    yield from _start_app(tmp_path_factory.mktemp("scripted_app"),
                          {"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake_server.url})


# ---- the browser ----------------------------------------------------------------------------------------


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make chromium` (Debian's chromium package).")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


def _make_journey(request: pytest.FixtureRequest, browser: Browser, app: LiveApp,
                  **context_options: Any) -> Iterator[Journey]:
    """`context_options` go to Playwright's new_context (a viewport, a colour scheme, bypass_csp for axe)."""
    shots = ARTIFACTS / request.node.name
    shutil.rmtree(shots, ignore_errors=True)
    shots.mkdir(parents=True)
    options: dict[str, Any] = {"viewport": {"width": 1400, "height": 900}, **context_options}
    context = browser.new_context(base_url=app.url, **options)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    journey = Journey(page=page, app=app, shots=shots, phone=options["viewport"] is PHONE)

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            journey.console_errors.append(f"{message.text} ({json.dumps(message.location)})")

    def on_request(req: Any) -> None:
        journey.requests.append(req.url)
        if not is_local(req.url):
            journey.foreign_requests.append(req.url)

    page.on("console", on_console)
    page.on("pageerror", lambda error: journey.page_errors.append(str(error)))
    context.on("request", on_request)
    saving: set[Any] = set()  # the page's view saves in flight, so the state is forgotten after the last one
    last_save = [0.0]  # when the latest one started: pagehide's keepalive save is reported a moment after unload

    def on_save(req: Any) -> None:
        if req.method == "PUT" and "/api/views/" in req.url:
            saving.add(req)
            last_save[0] = time.monotonic()

    context.on("request", on_save)
    context.on("requestfinished", lambda req: saving.discard(req))
    context.on("requestfailed", lambda req: saving.discard(req))
    # Nothing leaves the machine: requests to any other host are recorded (above) and refused here.
    context.route(lambda url: not is_local(url), lambda route: route.abort("blockedbyclient"))
    try:
        yield journey
        report = getattr(request.node, "report_call", None)
        if report is not None and report.failed:
            try:
                journey.shot("failure")
            except Exception as exc:  # noqa: BLE001 - a missing screenshot must not hide the failure
                print(f"no failure screenshot: {exc}")
        # The journeys share one app and its users: the page state this one left (saved views restore it on
        # the next sign-in) is forgotten, so the next journey starts from empty pages. Leaving the page first
        # flushes a pending save (pagehide), which must land before the delete, not after it.
        try:
            page.goto("about:blank")
            left = time.monotonic()
            deadline = left + 5
            while (saving or time.monotonic() - max(last_save[0], left) < 0.3) and time.monotonic() < deadline:
                page.wait_for_timeout(50)
        except Exception as exc:  # noqa: BLE001 - a page already closed has nothing pending
            print(f"page not left: {exc}")
        for app_name in ("trialscout", "tablizer"):
            try:
                context.request.delete(f"{app.url}/api/views/{app_name}/current")
            except Exception as exc:  # noqa: BLE001 - a closed page or a signed-out user: nothing left to forget
                print(f"views not reset: {exc}")
    finally:
        context.close()
    report = getattr(request.node, "report_call", None)
    if report is not None and report.passed:
        journey.assert_clean()  # a backstop: the journeys also check this at their end


@pytest.fixture
def demo_journey(request: pytest.FixtureRequest, browser: Browser, demo_app: LiveApp) -> Iterator[Journey]:
    yield from _make_journey(request, browser, demo_app)


@pytest.fixture
def look(request: pytest.FixtureRequest, browser: Browser, demo_app: LiveApp) -> Iterator[Journey]:
    """A demo-app journey at the test's `size` and `scheme` parameters (tests/browser/looks.py)."""
    params = request.node.callspec.params
    yield from _make_journey(request, browser, demo_app, **context_options(params["size"], params["scheme"]))


@pytest.fixture
def scripted_journey(request: pytest.FixtureRequest, browser: Browser, scripted_app: LiveApp,
                     fake_llm: FakeAnthropic) -> Iterator[Journey]:
    yield from _make_journey(request, browser, scripted_app)
