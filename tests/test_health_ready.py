"""Liveness and readiness for a load balancer: ready is 503 while the database is unreachable, the
worker's liveness lock is lost, or the instance drains (SIGTERM); live stays 200; `/api/health` is as
it was."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sse_starlette.sse import AppStatus
from starlette.testclient import TestClient

from backend.db.session import Database
from backend.main import create_app
from tests.conftest import make_settings


def test_ready_while_serving_then_unready_while_draining(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    with TestClient(app) as client:
        r = client.get("/api/health/ready")
        assert r.status_code == 200 and r.json() == {"status": "ready", "draining": False, "worker_lock": "held",
                                                     "database": "ok"}
        assert client.get("/api/health/live").json() == {"status": "alive"}
        monkeypatch.setattr(AppStatus, "should_exit", True)  # what uvicorn's SIGTERM handler sets first
        r = client.get("/api/health/ready")
        assert r.status_code == 503 and r.json()["status"] == "unready" and r.json()["draining"] is True
        monkeypatch.setattr(AppStatus, "should_exit", False)
        app.state.chat.close_readers()  # the drain under way: streams told to resume elsewhere
        assert client.get("/api/health/ready").status_code == 503
        assert client.get("/api/health/live").status_code == 200
        assert client.get("/api/health").status_code == 200  # the contract's route is unchanged


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_unready_while_the_database_is_unreachable(kind: str, tmp_path: Path) -> None:
    (tmp_path / "colleague.db").mkdir()  # where the database file should be: SQLite can't open it
    url = (f"sqlite:///{tmp_path / 'colleague.db'}" if kind == "sqlite"
           else "postgresql+psycopg://nobody@127.0.0.1:1/none?connect_timeout=2")  # nothing listens there
    client = TestClient(create_app(make_settings(url)))  # no lifespan: it could not start against it
    r = client.get("/api/health/ready")
    assert r.status_code == 503 and r.json()["database"].startswith("unreachable")
    assert client.get("/api/health/live").status_code == 200
    assert client.get("/api/health").json()["status"] == "degraded"


def test_unready_when_the_worker_lock_is_lost(app: Any, db_url: str) -> None:
    with TestClient(app) as client:
        assert client.get("/api/health/ready").status_code == 200
        presence = app.state.chat.presence
        if db_url.startswith("postgresql"):  # the lock's connection killed under it, as a failover would
            db = Database(db_url)
            with db.session() as s:
                pid = s.scalar(sa.text("SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted "
                                       "AND objid::bigint = :id AND objsubid = 2"), {"id": int(presence.id)})
                assert s.scalar(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
            db.dispose()
        else:
            presence.release()
        r = client.get("/api/health/ready")
        assert r.status_code == 503 and r.json()["worker_lock"] == "lost"
        presence.keep()  # the sweep's check takes the lock again
        if db_url.startswith("sqlite"):
            presence.hold()
        assert client.get("/api/health/ready").status_code == 200
