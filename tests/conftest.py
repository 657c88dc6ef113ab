"""Shared fixtures: both databases, the scripted fake Messages API, the app and signed-in clients.

The database suite runs on SQLite always and on PostgreSQL (127.0.0.1:5432) when it is reachable; in
CI (CI set) an unreachable PostgreSQL fails the run instead of skipping it.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from starlette.testclient import TestClient

from backend.chat.workers import WorkerPresence
from backend.config import Settings
from backend.db.migrate import upgrade
from backend.db.session import Database
from backend.main import create_app
from tests.fakes.anthropic_server import FakeAnthropic, start_fake_anthropic
from tests.fakes.fake_page import fake_page_registered

PG_ADMIN_URL = os.environ.get("COLLEAGUE_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
TABLES = ("saved_views", "screening_reports", "screening_judgements", "screening_criteria", "screening_trials",
          "screening_events", "screenings",
          "patient_versions", "patients", "reports", "rate_limit_counters", "model_usage", "daily_usage",
          "ai_column_results", "turn_events", "chat_turns", "message_versions", "messages", "conversations",
          "stream_instruction_versions", "research_streams", "auth_sessions", "login_failures", "users")


def _pg_available() -> str | None:
    try:
        engine = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
        engine.dispose()
        return None
    except Exception as exc:  # noqa: BLE001 - the reason is reported
        return f"{type(exc).__name__}: {exc}"


def create_pg_database() -> tuple[str, Any]:
    """A fresh PostgreSQL database; returns its URL and a function that drops it."""
    problem = _pg_available()
    if problem:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL at {PG_ADMIN_URL} is unreachable in CI: {problem}")
        pytest.skip(f"PostgreSQL unreachable: {problem}")
    name = f"colleague_test_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = sa.engine.make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)

    def drop() -> None:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    return url, drop


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def migrated_db_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'colleague.db'}"
        upgrade(url)
        yield url
        return
    url, drop = create_pg_database()
    upgrade(url)
    yield url
    drop()


@pytest.fixture
def db_url(migrated_db_url: str) -> Iterator[str]:
    yield migrated_db_url
    engine = sa.create_engine(migrated_db_url)
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            conn.execute(sa.text(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE"))
        else:
            for table in TABLES:
                conn.execute(sa.text(f"DELETE FROM {table}"))
    engine.dispose()


@pytest.fixture(autouse=True)
def engines_disposed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every app a test started is stopped after it, and every database it opened has its pooled connections
    closed. A client entered and never left (`signed_in` for a second user) keeps its app's lifespan running
    in a thread: its sweeps open new connections after the test, which the collector frees later while still
    open — psycopg then warns in whatever test is running. An app a test drove without its lifespan (a bare
    `TestClient(app)`, an ASGI transport) leaves its connections and liveness lock to close here too."""
    opened: list[Database] = []
    presences: list[WorkerPresence] = []
    started: dict[int, TestClient] = {}
    init, presence_init = Database.__init__, WorkerPresence.__init__
    enter, leave = TestClient.__enter__, TestClient.__exit__

    def tracked(self: Database, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        opened.append(self)

    def tracked_presence(self: WorkerPresence, *args: Any, **kwargs: Any) -> None:
        presence_init(self, *args, **kwargs)
        presences.append(self)

    def entered(self: TestClient) -> TestClient:
        client = enter(self)
        started[id(self)] = self
        return client

    def left(self: TestClient, *exc: Any) -> None:
        started.pop(id(self), None)
        leave(self, *exc)

    monkeypatch.setattr(Database, "__init__", tracked)
    monkeypatch.setattr(WorkerPresence, "__init__", tracked_presence)
    monkeypatch.setattr(TestClient, "__enter__", entered)
    monkeypatch.setattr(TestClient, "__exit__", left)
    yield
    for client in reversed(list(started.values())):  # (a test's own fixtures have left theirs already)
        client.__exit__(None, None, None)
    for presence in presences:  # a liveness lock's own connection, of an app whose lifespan never ended
        while presence.held:
            presence.release()
    for database in opened:
        database.dispose()


@pytest.fixture(scope="session")
def fake_server() -> Iterator[FakeAnthropic]:
    fake, stop = start_fake_anthropic()
    yield fake
    stop()


@pytest.fixture
def fake_llm(fake_server: FakeAnthropic) -> Iterator[FakeAnthropic]:
    fake_server.reset()
    yield fake_server
    assert not fake_server.violations, f"requests broke the API's rules: {fake_server.violations}"


def make_settings(db_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"DATABASE_URL": db_url, "ANTHROPIC_API_KEY": None, "COLLEAGUE_DEMO": False,
                              "COLLEAGUE_DEMO_DELAY_MS": 0, "COLLEAGUE_SOURCES": "offline",
                              # every upstream delta its own frame (the shared transcript's frames are exact)
                              "COLLEAGUE_COALESCE_MS": 0}
    values.update(overrides)
    return Settings(**values)


@pytest.fixture
def settings(db_url: str, fake_llm: FakeAnthropic) -> Settings:
    return make_settings(db_url, ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=fake_llm.url)


@pytest.fixture
def app(settings: Settings) -> Any:
    return create_app(settings)


@pytest.fixture
def db(db_url: str) -> Iterator[Database]:
    database = Database(db_url)
    yield database
    database.dispose()


def add_user(db: Database, username: str, role: str = "user") -> int:
    from backend.auth.service import create_user
    with db.session() as s:
        return create_user(s, username, "secret-pw", role).id


def signed_in(app: Any, db: Database, username: str, role: str = "user") -> TestClient:
    add_user(db, username, role)
    client = TestClient(app)
    client.__enter__()
    r = client.post("/api/auth/login", json={"username": username, "password": "secret-pw"})
    assert r.status_code == 200, r.text
    return client


def signed_in_for_test(app: Any, db: Database, username: str, role: str = "user") -> Iterator[TestClient]:
    """`signed_in` for a fixture: the client, and after the test its app's lifespan ended."""
    client = signed_in(app, db, username, role)
    yield client
    client.__exit__(None, None, None)


def signed_in_fixture(username: str, role: str = "user", app: str = "app") -> Any:
    """A fixture: a client signed in as `username` to the app the fixture named `app` builds."""

    @pytest.fixture
    def signed_in_client(request: pytest.FixtureRequest, db: Database) -> Iterator[TestClient]:
        yield from signed_in_for_test(request.getfixturevalue(app), db, username, role)

    return signed_in_client


alice = signed_in_fixture("alice")
bob = signed_in_fixture("bob")
admin = signed_in_fixture("root", role="admin")


@pytest.fixture
def demo(db_url: str, db: Database) -> Iterator[TestClient]:
    """Signed in to an app with no key: the demo model answers through the real SDK."""
    yield from signed_in_for_test(create_app(make_settings(db_url)), db, "dana")


@pytest.fixture
def test_registry() -> Iterator[None]:
    with fake_page_registered():
        yield


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database of each kind, for migration tests."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'm.db'}"
        return
    url, drop = create_pg_database()
    yield url
    drop()
