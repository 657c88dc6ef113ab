"""The CLI as an operator runs it: `python -m backend migrate` and `create-user`, in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import sqlalchemy as sa


def run(args: list[str], db_url: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("COLLEAGUE_", "ANTHROPIC_"))}
    environ.update(DATABASE_URL=db_url, **env)
    return subprocess.run([sys.executable, "-m", "backend", *args], capture_output=True, text=True, env=environ,
                          cwd=Path(__file__).resolve().parents[2], timeout=120)


def test_migrate_and_create_users(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    assert run(["migrate"], url).returncode == 0
    made = run(["create-user", "grace", "--admin"], url, COLLEAGUE_PASSWORD="hopper-pw")
    assert made.returncode == 0 and "created admin 'grace'" in made.stdout
    again = run(["create-user", "grace", "--password", "x1234"], url)
    assert again.returncode == 1 and "already exists" in again.stderr
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT username, role, password_hash FROM users")).all()
    engine.dispose()
    assert [(r.username, r.role) for r in rows] == [("grace", "admin")]
    assert rows[0].password_hash.startswith("$argon2") and "hopper-pw" not in rows[0].password_hash
