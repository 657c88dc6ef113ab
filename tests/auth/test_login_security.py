"""Sign-in over HTTP: failed logins throttled per account and per address (in the database, so across
workers), unknown names cost what wrong passwords cost, session tokens stored hashed, Secure cookies."""

from __future__ import annotations

import hashlib
import statistics
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from fastapi import FastAPI
from starlette.testclient import TestClient

from backend.db.base import UTCDateTime, utcnow
from backend.db.session import Database
from backend.main import create_app
from tests.conftest import add_user, make_settings

ALICE_PW = BOB_PW = "secret-pw"
ADDRESS_A = ("203.0.113.5", 40000)
ADDRESS_B = ("198.51.100.7", 40000)


@pytest.fixture
def make_app(db_url: str) -> Callable[..., FastAPI]:
    def build(**overrides: Any) -> FastAPI:
        return create_app(make_settings(db_url, **overrides))

    return build


def login(client: TestClient, username: str, password: str) -> Any:
    return client.post("/api/auth/login", json={"username": username, "password": password})


def retry_after(response: Any) -> int:
    assert response.status_code == 429, response.text
    assert response.json()["error"] == "too_many_requests"
    value = int(response.headers["retry-after"])
    assert value > 0
    return value


def expire_locks(db: Database) -> None:
    """Time passes: every lockout ends (the counts stay)."""
    failures = sa.table("login_failures", sa.column("blocked_until", UTCDateTime))
    with db.session() as s:
        s.execute(sa.update(failures).values(blocked_until=utcnow() - timedelta(seconds=1)))


def test_failures_lock_the_account_with_growing_backoff(make_app: Any, db: Database) -> None:
    add_user(db, "alice")
    add_user(db, "bob")
    # Two apps on one database stand for two uvicorn workers: the counts are shared.
    worker_1 = TestClient(make_app(COLLEAGUE_LOGIN_MAX_FAILURES=3, COLLEAGUE_LOGIN_LOCKOUT_SECONDS=30),
                          client=ADDRESS_A)
    worker_2 = TestClient(make_app(COLLEAGUE_LOGIN_MAX_FAILURES=3, COLLEAGUE_LOGIN_LOCKOUT_SECONDS=30),
                          client=ADDRESS_A)
    assert login(worker_1, "alice", "guess-1").status_code == 401
    assert login(worker_2, "alice", "guess-2").status_code == 401
    assert login(worker_1, "alice", "guess-3").status_code == 401  # the third failure locks the account
    first = retry_after(login(worker_2, "alice", "guess-4"))
    assert first <= 30
    # While locked, even the right password is refused, and no session is made.
    assert retry_after(login(worker_1, "alice", ALICE_PW)) <= 30
    assert "set-cookie" not in login(worker_1, "alice", ALICE_PW).headers

    # Another account from another address is unaffected.
    other = TestClient(worker_1.app, client=ADDRESS_B)
    assert login(other, "bob", BOB_PW).status_code == 200

    # After the lock ends, one more failure locks it again, for longer.
    expire_locks(db)
    assert login(worker_1, "alice", "guess-5").status_code == 401
    second = retry_after(login(worker_2, "alice", "guess-6"))
    assert second > first and second <= 60

    # A successful sign-in after the lock forgets the account's failures.
    expire_locks(db)
    r = login(worker_1, "alice", ALICE_PW)
    assert r.status_code == 200, r.text
    assert worker_1.get("/api/auth/me").json()["username"] == "alice"
    assert login(worker_2, "alice", "typo").status_code == 401
    assert login(worker_2, "alice", ALICE_PW).status_code == 200


def test_one_address_is_throttled_across_accounts(make_app: Any, db: Database) -> None:
    add_user(db, "alice")
    app = make_app(COLLEAGUE_LOGIN_MAX_FAILURES=10, COLLEAGUE_LOGIN_MAX_FAILURES_PER_ADDRESS=4)
    sprayer = TestClient(app, client=ADDRESS_A)
    for name in ("ann", "ben", "cy", "alice"):  # one guess per account stays under the account limit
        assert login(sprayer, name, "Winter2026!").status_code == 401
    retry_after(login(sprayer, "dee", "Winter2026!"))
    retry_after(login(sprayer, "alice", ALICE_PW))
    assert login(TestClient(app, client=ADDRESS_B), "alice", ALICE_PW).status_code == 200


def test_unknown_user_costs_what_a_wrong_password_costs(make_app: Any, db: Database) -> None:
    add_user(db, "alice")
    client = TestClient(make_app(COLLEAGUE_LOGIN_MAX_FAILURES=1000, COLLEAGUE_LOGIN_MAX_FAILURES_PER_ADDRESS=1000))

    def timed(username: str) -> float:
        start = time.perf_counter()
        assert login(client, username, "wrong-password").status_code == 401
        return time.perf_counter() - start

    timed("nobody-warmup")
    timed("alice")
    unknown = statistics.median(timed(f"nobody-{i}") for i in range(5))
    wrong = statistics.median(timed("alice") for _ in range(5))
    assert 1 / 3 < unknown / wrong < 3, f"unknown user {unknown * 1000:.1f} ms, wrong password {wrong * 1000:.1f} ms"


def test_session_tokens_are_stored_hashed(make_app: Any, db: Database) -> None:
    add_user(db, "alice")
    client = TestClient(make_app())
    assert login(client, "alice", ALICE_PW).status_code == 200
    cookie = client.cookies["colleague_session"]
    with db.engine.connect() as conn:
        rows = [tuple(row) for row in conn.execute(sa.text("SELECT * FROM auth_sessions"))]
    assert len(rows) == 1
    stored = {str(value) for value in rows[0]}
    assert cookie not in stored
    digest = hashlib.sha256(cookie.encode()).hexdigest()
    assert digest in stored
    # What the table holds does not sign anyone in.
    stranger = TestClient(client.app)
    assert stranger.get("/api/auth/me", headers={"Authorization": f"Bearer {digest}"}).status_code == 401
    assert stranger.get("/api/auth/me", headers={"Authorization": f"Bearer {cookie}"}).status_code == 200
    assert client.post("/api/auth/logout").status_code == 200
    with db.engine.connect() as conn:
        assert conn.execute(sa.text("SELECT COUNT(*) FROM auth_sessions")).scalar() == 0


def test_an_expired_session_or_a_deleted_user_signs_no_one_in(make_app: Any, db: Database) -> None:
    """The session lookup every request makes: a live session is the user it names; one past its expiry,
    or one whose user is gone, is a 401 that says to sign in (and a chat turn never starts)."""
    add_user(db, "alice")
    add_user(db, "bob")
    app = make_app()
    alice, bob = TestClient(app), TestClient(app)
    assert login(alice, "alice", ALICE_PW).status_code == 200 and login(bob, "bob", BOB_PW).status_code == 200
    assert alice.get("/api/auth/me").json()["username"] == "alice"
    with db.engine.begin() as conn:
        conn.execute(sa.text("UPDATE auth_sessions SET expires_at = :past WHERE user_id = "
                             "(SELECT id FROM users WHERE username = 'alice')").bindparams(
                                 sa.bindparam("past", utcnow() - timedelta(seconds=1), UTCDateTime())))
    refused = alice.get("/api/auth/me")
    assert refused.status_code == 401 and "sign in" in refused.json()["detail"]
    assert alice.post("/api/chat/stream", json={"message": "hi", "context": {}}).status_code == 401
    assert bob.get("/api/auth/me").json()["username"] == "bob"  # another session is untouched
    sqlite = db.url.startswith("sqlite")
    with db.engine.begin() as conn:  # on SQLite without the cascade: a session row whose user is gone
        if sqlite:
            conn.execute(sa.text("PRAGMA foreign_keys=OFF"))
        conn.execute(sa.text("DELETE FROM users WHERE username = 'bob'"))
    if sqlite:
        with db.engine.connect() as conn:
            conn.execute(sa.text("PRAGMA foreign_keys=ON"))
    assert bob.get("/api/auth/me").status_code == 401


def session_cookie(response: Any) -> str:
    assert response.status_code == 200, response.text
    cookies = [v for v in response.headers.get_list("set-cookie") if v.startswith("colleague_session=")]
    assert len(cookies) == 1
    return cookies[0].lower()


def test_cookie_is_secure_over_https(make_app: Any, db: Database) -> None:
    add_user(db, "alice")
    app = make_app()
    over_https = session_cookie(login(TestClient(app, base_url="https://testserver"), "alice", ALICE_PW))
    assert "; secure" in over_https and "httponly" in over_https and "samesite=lax" in over_https
    assert "; secure" not in session_cookie(login(TestClient(app), "alice", ALICE_PW))
    forced = make_app(COLLEAGUE_COOKIE_SECURE=True)
    assert "; secure" in session_cookie(login(TestClient(forced), "alice", ALICE_PW))
