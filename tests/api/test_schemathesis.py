"""schemathesis against the app's own OpenAPI: every non-SSE operation, valid and invalid input, as a signed-in
user and as an admin. No input may be a server error, every response must match its declared schema, and
every status code must be declared.

SQLite only (the id bounds on PostgreSQL are tested in test_input_bounds.py). The example count is bounded so
the whole run stays well under a minute on two cores; raise COLLEAGUE_FUZZ_EXAMPLES to search harder.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import CHECKS as REGISTERED
from schemathesis.checks import load_all_checks
from schemathesis.core.failures import FailureGroup
from schemathesis.python.asgi import ASGIClient
from schemathesis.specs.openapi.checks import positive_data_acceptance
from starlette.testclient import TestClient

from backend.auth.deps import COOKIE_NAME
from backend.db.migrate import upgrade
from backend.main import create_app
from tests.conftest import add_user, make_settings

EXAMPLES = int(os.environ.get("COLLEAGUE_FUZZ_EXAMPLES", "12"))
load_all_checks()
# Every check schemathesis has, so the document must state every rule the server enforces (a schema-valid
# request refused, or an invalid one accepted, fails), and wrong methods answer 405 with the full `Allow`.
# Left out: the ones that need what a single signed-in session cannot give (a second user for
# object-level authorization, a created-then-deleted resource's links) or measure time.
NOT_APPLICABLE = {"ignored_auth", "object_level_authorization", "use_after_free", "ensure_resource_availability",
                  "max_response_time"}
# Rules a JSON schema cannot state, each written in its parameter's description instead: a search's grammar
# and size (balanced parentheses, wildcards, terms), a page token being one the server handed out, a
# range's ends in order. A schema-valid request refused for one of these (and only these) is expected.
UNSTATABLE = re.compile(r"Could not read|has no words to search for|too costly to run|page_token|"
                        r"is after date_end|min_age .* max_age|max_age .* min_age|"
                        r"start must not be after end|The period is at most")


def positive_data_acceptance_but_grammar(ctx: Any, response: Any, case: schemathesis.Case) -> bool | None:
    if response.status_code == 422 and UNSTATABLE.search(response.json().get("detail", "")):
        return None
    return positive_data_acceptance(ctx, response, case)


CHECKS = [positive_data_acceptance_but_grammar if c is positive_data_acceptance else c
          for c in REGISTERED.get_all() if c.__name__ not in NOT_APPLICABLE]
# Signing out would end the run's own session; SSE routes stream (the chat and AI columns have their tests).
SKIPPED = {("POST", "/api/auth/logout")}


@pytest.fixture(scope="module")
def fuzzed_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    url = f"sqlite:///{tmp_path_factory.mktemp('fuzz') / 'colleague.db'}"
    upgrade(url)
    # The demo model and the offline corpus: nothing leaves the machine. No per-minute limits: a 429 would hide
    # what the route does with the input.
    app = create_app(make_settings(url, COLLEAGUE_SEARCHES_PER_MINUTE=0, COLLEAGUE_EXPORTS_PER_MINUTE=0,
                                   COLLEAGUE_AI_COLUMN_RUNS_PER_MINUTE=0))
    yield app
    app.state.db.dispose()


def session_for(app: Any, username: str, role: str) -> ASGIClient:
    add_user(app.state.db, username, role)
    with TestClient(app) as client:
        r = client.post("/api/auth/login", json={"username": username, "password": "secret-pw"})
        assert r.status_code == 200, r.text
        token = r.cookies[COOKIE_NAME]
    session = ASGIClient(app)  # schemathesis' in-process client (requests API), signed in by the cookie
    session.cookies.set(COOKIE_NAME, token)
    return session


def streams_events(operation: Any) -> bool:
    return any("text/event-stream" in (response.get("content") or {})
               for response in operation.definition.raw.get("responses", {}).values())


def explore(operation: Any, mode: schemathesis.GenerationMode, session: ASGIClient, failures: dict[str, str]) -> None:
    """Up to EXAMPLES generated requests; each distinct failure (operation, mode, kind) kept with a curl."""

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    def check(case: schemathesis.Case) -> None:
        try:
            case.call_and_validate(session=session, base_url="http://testserver", checks=CHECKS)
        except FailureGroup as group:
            for failure in group.exceptions:
                key = f"{operation.label} ({mode.value}): {failure.title}"
                failures.setdefault(key, f"{key}\n    {case.as_curl_command()}\n    {failure.message}")

    try:
        check()
    except Unsatisfiable:  # no invalid input exists for it (no parameters, or any string is valid)
        assert mode == schemathesis.GenerationMode.NEGATIVE, operation.label


def fuzz(app: Any, session: ASGIClient) -> tuple[list[str], int]:
    """Failures (one per operation, mode and kind) and the number of operations run."""
    schema = schemathesis.openapi.from_dict(app.openapi())
    failures: dict[str, str] = {}
    ran = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        if (operation.method.upper(), operation.path) in SKIPPED or streams_events(operation):
            continue
        ran += 1
        for mode in (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE):
            explore(operation, mode, session, failures)
    return sorted(failures.values()), ran


@pytest.mark.parametrize("role", ["user", "admin"])
def test_no_server_errors_and_every_response_as_declared(fuzzed_app: Any, role: str) -> None:
    failures, ran = fuzz(fuzzed_app, session_for(fuzzed_app, f"fuzz-{role}", role))
    assert ran >= 20  # every JSON route of the API, not a subset that happened to load
    assert failures == [], "\n\n".join(failures)
