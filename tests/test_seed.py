"""Demo seeding when every worker of `serve --workers N` runs it at once, on a fresh database."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

from backend.db.migrate import upgrade
from backend.db.session import Database
from backend.seed import DEMO_STREAMS, seed_demo
from tests.live_server import stop

ROOT = Path(__file__).resolve().parents[1]


def _counts(url: str) -> tuple[list[str], list[str], int]:
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        users = list(conn.scalars(sa.text("SELECT username FROM users ORDER BY username")))
        streams = list(conn.scalars(sa.text("SELECT name FROM research_streams ORDER BY id")))
        versions = conn.scalar(sa.text("SELECT count(*) FROM stream_instruction_versions"))
    engine.dispose()
    return users, streams, int(versions or 0)


def test_concurrent_seeders_make_each_row_once(empty_db: str) -> None:
    upgrade(empty_db)
    seeders = 4
    start = threading.Barrier(seeders)
    errors: list[BaseException] = []

    def seed() -> None:
        db = Database(empty_db)
        try:
            start.wait()
            seed_demo(db)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            db.dispose()

    threads = [threading.Thread(target=seed) for _ in range(seeders)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    users, streams, versions = _counts(empty_db)
    assert users == ["admin", "demo"]
    assert streams == [d.name for d in DEMO_STREAMS]
    assert versions == sum(len(d.versions) for d in DEMO_STREAMS)
    seed_demo(db := Database(empty_db))  # and once more, later: nothing new
    db.dispose()
    assert _counts(empty_db) == (users, streams, versions)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_two_workers_start_on_a_fresh_demo_database(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    upgrade(url)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COLLEAGUE_", "ANTHROPIC_"))}
    env.update(DATABASE_URL=url, COLLEAGUE_DEMO="1", COLLEAGUE_FRONTEND_DIST=str(tmp_path))
    log_path = tmp_path / "serve.log"
    with log_path.open("w") as log:
        server = subprocess.Popen([sys.executable, "-m", "backend", "serve", "--workers", "2", "--port", str(port)],
                                  cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and server.poll() is None:
            output = log_path.read_text()
            if "startup failed" in output or output.count("Application startup complete.") >= 2:
                break
            time.sleep(0.1)
        output = log_path.read_text()
        assert "startup failed" not in output and "Traceback" not in output, output
        if output.count("Application startup complete.") < 2:
            assert server.poll() is None, output
            pytest.skip("two workers did not finish starting within 20 s on this machine")
        workers = set(re.findall(r"Started server process \[(\d+)\]", output))
        assert len(workers) == 2, output
        for _ in range(6):  # fresh connections, spread over both workers by the kernel
            r = httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=5)
            assert r.status_code == 200 and r.json()["database"] == "ok"
        assert server.poll() is None, log_path.read_text()
        assert all(Path(f"/proc/{pid}").exists() for pid in workers), log_path.read_text()
    finally:
        stop(server, timeout=10)
    assert _counts(url)[0] == ["admin", "demo"]
