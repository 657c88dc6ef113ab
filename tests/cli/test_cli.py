"""The CLI as an operator runs it: `python -m backend migrate` and `create-user`, in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import sqlalchemy as sa

from tests.live_server import START_TIMEOUT, free_port


def run(args: list[str], db_url: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("COLLEAGUE_", "ANTHROPIC_"))}
    environ.update(DATABASE_URL=db_url, **env)
    return subprocess.run([sys.executable, "-m", "backend", *args], capture_output=True, text=True, env=environ,
                          cwd=Path(__file__).resolve().parents[2], timeout=120)


def test_migrate_and_create_users(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    assert run(["migrate"], url).returncode == 0
    short = run(["create-user", "grace", "--admin", "--password", "1234"], url)
    assert short.returncode == 1 and "at least 12 characters" in short.stderr
    made = run(["create-user", "grace", "--admin"], url, COLLEAGUE_PASSWORD="hopper-pw-2026")
    assert made.returncode == 0 and "created admin 'grace'" in made.stdout
    again = run(["create-user", "grace", "--password", "x1234-long-enough"], url)
    assert again.returncode == 1 and "already exists" in again.stderr
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT username, role, password_hash FROM users")).all()
    engine.dispose()
    assert [(r.username, r.role) for r in rows] == [("grace", "admin")]
    assert rows[0].password_hash.startswith("$argon2") and "hopper-pw-2026" not in rows[0].password_hash


def test_serve_with_two_workers_starts_on_a_fresh_database_in_demo_mode(tmp_path: Path) -> None:
    """`serve` migrates once before its workers start, and both workers seed the demo accounts without
    colliding: the server stays up and signs the demo user in."""
    port = free_port()
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("COLLEAGUE_", "ANTHROPIC_"))}
    environ.update(DATABASE_URL=f"sqlite:///{tmp_path / 'fresh.db'}", COLLEAGUE_DEMO="1")
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "backend", "serve", "--port", str(port), "--workers", "2"],
                                cwd=Path(__file__).resolve().parents[2], env=environ, stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + START_TIMEOUT * 2  # two cold interpreters
        while True:
            assert proc.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        for _ in range(4):  # spread over both workers
            r = httpx.post(f"http://127.0.0.1:{port}/api/auth/login", json={"username": "demo", "password": "demo"},
                           timeout=30)
            assert r.status_code == 200, r.text
        while log.read_text().count("Application startup complete") < 2:  # the second worker seeded too
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.2)
        assert "Traceback" not in log.read_text()
    finally:
        proc.terminate()
        proc.wait(30)
