"""From SIGTERM on, an instance answers new requests 503 before the app sees them (a proxy passes them to
another instance: deploy/nginx.conf), but still reports on itself."""

from __future__ import annotations

from typing import Any

import pytest
from sse_starlette.sse import AppStatus
from starlette.testclient import TestClient

from backend.db.models import ChatTurn
from tests.fakes.fake_page import CONTEXT


def test_a_draining_instance_refuses_new_requests(app: Any, alice: TestClient, monkeypatch: pytest.MonkeyPatch
                                                  ) -> None:
    assert alice.get("/api/conversations", params={"app": "tablizer"}).status_code == 200
    monkeypatch.setattr(AppStatus, "should_exit", True)  # what uvicorn's SIGTERM handler sets first
    for r in (alice.get("/api/conversations", params={"app": "tablizer"}),
              alice.post("/api/chat/stream", json={"message": "hello", "context": CONTEXT})):
        assert r.status_code == 503 and r.headers["retry-after"] == "1" and r.headers["connection"] == "close"
        assert r.json()["error"] == "unavailable" and "content-security-policy" in r.headers
    assert alice.get("/api/health/live").status_code == 200
    assert alice.get("/api/health/ready").status_code == 503  # unready, as before: a report, not a refusal
    with app.state.db.session() as s:  # the refused send began nothing
        assert s.query(ChatTurn).count() == 0
    monkeypatch.setattr(AppStatus, "should_exit", False)
    assert alice.get("/api/conversations", params={"app": "tablizer"}).status_code == 200
