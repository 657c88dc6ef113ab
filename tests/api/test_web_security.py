"""Browser defences over HTTP: security headers on every response, cross-site writes refused (and harmless)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select
from starlette.testclient import TestClient

from backend.db.base import utcnow
from backend.db.models import AuthSession, Conversation
from backend.db.session import Database

EVIL = "http://evil.example"


def assert_security_headers(response: Any) -> None:
    policy = response.headers.get("content-security-policy", "")
    directives = {d.strip().split(" ", 1)[0]: d.strip() for d in policy.split(";") if d.strip()}
    assert directives.get("default-src") == "default-src 'self'", policy
    assert directives.get("object-src") == "object-src 'none'", policy
    assert directives.get("base-uri") == "base-uri 'none'", policy
    assert directives.get("frame-ancestors") == "frame-ancestors 'none'", policy
    assert directives.get("img-src") == "img-src 'self' data:", policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert response.headers.get("x-content-type-options") == "nosniff"
    assert response.headers.get("referrer-policy") in ("same-origin", "no-referrer", "strict-origin")


def test_headers_on_the_spa_the_api_and_errors(alice: TestClient) -> None:
    docs = alice.get("/docs")  # FastAPI's page needs its CDN script: only the framing rules apply there
    assert "frame-ancestors 'none'" in docs.headers["content-security-policy"]
    for path, status in [("/", None), ("/tablizer", None), ("/api/health", 200), ("/api/auth/me", 200),
                         ("/api/no-such-route", 404), ("/api/conversations/999999", 404)]:
        response = alice.get(path)
        if status is not None:
            assert response.status_code == status, (path, response.text)
        assert_security_headers(response)
    anonymous = TestClient(alice.app)
    assert anonymous.get("/api/auth/me").status_code == 401
    assert_security_headers(anonymous.get("/api/auth/me"))


def own_conversation(alice: TestClient, db: Database) -> int:
    user_id = alice.get("/api/auth/me").json()["id"]
    with db.session() as s:
        # A turn is running (as another worker would mark it), so Stop has something to stop.
        conv = Conversation(user_id=user_id, title="mine", app="kh", active_turn_id="turn-1",
                            active_turn_expires_at=utcnow() + timedelta(minutes=5))
        s.add(conv)
        s.flush()
        return conv.id


@pytest.mark.parametrize("headers", [{"Origin": EVIL}, {"Origin": "null"},
                                     {"Origin": "http://testserver.evil.example"},
                                     {"Sec-Fetch-Site": "cross-site"}],
                         ids=["origin", "null-origin", "lookalike-origin", "sec-fetch-site"])
def test_cross_site_writes_are_refused_and_change_nothing(alice: TestClient, db: Database,
                                                          headers: dict[str, str]) -> None:
    conv = own_conversation(alice, db)
    calls = [("POST", f"/api/conversations/{conv}/stop", None),
             ("PATCH", f"/api/conversations/{conv}", {"title": "renamed by evil"}),
             ("DELETE", f"/api/conversations/{conv}", None),
             ("POST", "/api/auth/logout", None),
             ("POST", "/api/auth/login", {"username": "alice", "password": "secret-pw"})]
    for method, url, body in calls:
        response = alice.request(method, url, json=body, headers=headers)
        assert response.status_code == 403, (method, url, response.text)
        assert response.json()["error"] == "forbidden"
        assert isinstance(response.json()["detail"], str)
        assert_security_headers(response)
        assert "set-cookie" not in response.headers
    with db.session() as s:
        row = s.get(Conversation, conv)
        assert row is not None and row.title == "mine" and not row.stop_requested
        assert len(s.scalars(select(AuthSession)).all()) == 1
    assert alice.get("/api/auth/me").status_code == 200  # still signed in


def test_same_origin_and_headerless_writes_pass(alice: TestClient, db: Database) -> None:
    conv = own_conversation(alice, db)
    same_origin = {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"}
    r = alice.patch(f"/api/conversations/{conv}", json={"title": "renamed"}, headers=same_origin)
    assert r.status_code == 200, r.text
    assert_security_headers(r)
    r = alice.post(f"/api/conversations/{conv}/stop", headers=same_origin)
    assert r.status_code == 200 and r.json() == {"stopped": True}, r.text
    # A proxy may name the default port in Host; the browser never does in Origin.
    r = alice.patch(f"/api/conversations/{conv}", json={"title": "via proxy"},
                    headers={"Origin": "https://app.example", "Host": "app.example:443"})
    assert r.status_code == 200, r.text
    # Reading is never refused, whoever links to it.
    assert alice.get(f"/api/conversations/{conv}", headers={"Origin": EVIL}).status_code == 200
    r = alice.patch(f"/api/conversations/{conv}", json={"title": "by script"})  # no Origin: not a browser
    assert r.status_code == 200, r.text
    with db.session() as s:
        row = s.get(Conversation, conv)
        assert row is not None and row.title == "by script" and row.stop_requested
    assert alice.post("/api/auth/logout", headers=same_origin).status_code == 200
    assert alice.get("/api/auth/me").status_code == 401
