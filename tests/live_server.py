"""The app as production runs it — `python -m backend serve` in its own process — for fault injection:
SIGKILL, SIGTERM and restarts on the same database, with SSE streams read by threads over real sockets.
Also used by `benchmarks/durable_streams.py`.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from tests.sse import Event, parse_lines

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT = 60.0  # seconds for a cold interpreter to import the app on a loaded 2-core machine


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LiveServer:
    """One `python -m backend serve` process on a free loopback port."""

    health_path = "/api/health"  # answered 200 once it serves (a load balancer's view: /api/health/ready)
    start_timeout = START_TIMEOUT

    def __init__(self, database_url: str, model_url: str, log_path: Path, *extra_args: str) -> None:
        self.database_url = database_url
        self.model_url = model_url
        self.log_path = log_path
        self.extra_args = extra_args
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.launched = 0.0

    def start(self) -> float:
        """Start and wait until /api/health answers; returns the seconds that took."""
        self.launch()
        return self.wait_ready()

    def command(self) -> list[str]:
        return [sys.executable, "-m", "backend", "serve", "--host", "127.0.0.1", "--port", str(self.port),
                *self.extra_args]

    def environment(self) -> dict[str, str]:
        return {"DATABASE_URL": self.database_url, "ANTHROPIC_API_KEY": "test",
                "ANTHROPIC_BASE_URL": self.model_url, "COLLEAGUE_DEMO": "0", "COLLEAGUE_SOURCES": "offline",
                "PYTHONUNBUFFERED": "1",
                # One test user drives many streams at once: the per-user quotas are tested elsewhere.
                "COLLEAGUE_MAX_CONCURRENT_STREAMS": "0", "COLLEAGUE_TURNS_PER_MINUTE": "0",
                "COLLEAGUE_DAILY_TOKEN_BUDGET": "0"}

    def launch(self) -> None:
        self.launched = time.monotonic()
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.command(), cwd=ROOT, env={**os.environ, **self.environment()},
                                         stdout=log, stderr=subprocess.STDOUT)

    def wait_ready(self) -> float:
        assert self.proc is not None
        deadline = self.launched + self.start_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}: {self.log_tail()}")
            try:
                if httpx.get(self.url + self.health_path, timeout=1.0).status_code == 200:
                    return time.monotonic() - self.launched
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.kill()
        raise RuntimeError(f"server did not start in {self.start_timeout} s: {self.log_tail()}")

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, as in a crash or an OOM kill."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def terminate(self, timeout: float = 15.0) -> float:
        """SIGTERM and wait for the exit; returns the seconds the process took to exit."""
        assert self.proc is not None
        began = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise
        return time.monotonic() - began

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


def stop(process: subprocess.Popen[Any], timeout: float) -> None:
    """SIGTERM, then SIGKILL if the process has not exited within `timeout` seconds."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def login(base_url: str, username: str, password: str = "secret-pw") -> httpx.Client:
    client = httpx.Client(base_url=base_url, timeout=httpx.Timeout(30.0))
    r = client.post("/api/auth/login", json={"username": username, "password": password})
    assert r.status_code == 200, r.text
    return client


class StreamReader(threading.Thread):
    """Reads one SSE response (a POST /api/chat/stream or a GET …/stream) into `events`, noting when
    each arrived; a connection the server drops ends it quietly (`broken` says so)."""

    def __init__(self, client: httpx.Client, method: str, path: str, *, json: Any = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(daemon=True)
        self.client, self.method, self.path, self.json, self.headers = client, method, path, json, headers
        self.events: list[Event] = []
        self.times: list[float] = []
        self.status: int | None = None
        self.broken: str | None = None
        self.started_at = 0.0
        self.opened = threading.Event()

    def run(self) -> None:
        self.started_at = time.monotonic()
        try:
            with self.client.stream(self.method, self.path, json=self.json, headers=self.headers,
                                    timeout=httpx.Timeout(60.0)) as r:
                self.status = r.status_code
                self.opened.set()
                if r.status_code != 200:
                    r.read()
                    return
                for event in parse_lines(r.iter_lines()):
                    self.times.append(time.monotonic())
                    self.events.append(event)
        except httpx.HTTPError as exc:
            self.broken = f"{type(exc).__name__}: {exc}"
        finally:
            self.opened.set()

    @property
    def types(self) -> list[str]:
        return [e.event for e in self.events]

    def first(self, event_type: str) -> Event | None:
        return next((e for e in self.events if e.event == event_type), None)

    @property
    def conversation_id(self) -> int | None:
        opened = self.first("conversation")
        return opened.data["conversation_id"] if opened else None


def wait_for(condition: Any, timeout: float, what: str, every: float = 0.05) -> None:
    """Poll `condition()` until it is true (a bounded wait on an observable state, not a sleep)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(every)
