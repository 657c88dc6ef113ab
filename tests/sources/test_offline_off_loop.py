"""The offline index never holds the event loop: a search waiting on its query leaves every other request
answered; a statement past its time cap is stopped; searches too costly to run are refused before they run."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from starlette.testclient import TestClient

from backend.db.session import Database
from backend.main import create_app
from backend.sources.offline.index import OfflineIndex, SearchTooSlow, get_index
from tests.conftest import make_settings, signed_in

ALPHABET = " OR ".join(f"{c}*" for c in "abcdefghijklmnopqrstuvwxyz")


def test_health_answers_while_a_search_waits_on_its_query(alice: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    get_index()  # opened (or built) before the gate goes up
    entered, release = threading.Event(), threading.Event()
    query = OfflineIndex.query

    def slow(self: OfflineIndex, sql: str, args: Any = ()) -> list[tuple[Any, ...]]:
        if "count(*)" in sql and not release.is_set():
            entered.set()
            release.wait(timeout=20)  # a query that takes as long as the test wants
        return query(self, sql, args)

    monkeypatch.setattr(OfflineIndex, "query", slow)
    results: dict[str, Any] = {}
    search = threading.Thread(target=lambda: results.setdefault(
        "search", alice.get("/api/trials/search", params={"condition": "lung cancer"})))
    health = threading.Thread(target=lambda: results.setdefault("health", alice.get("/api/health")))
    try:
        search.start()
        assert entered.wait(timeout=20)  # the search is inside its query now
        health.start()
        health.join(timeout=10)
        # Answered while the search still waits (on the loop, the query held it: health waited for the search).
        assert not health.is_alive() and results["health"].status_code == 200
        assert search.is_alive() and "search" not in results
    finally:
        release.set()
        search.join(timeout=20)
        health.join(timeout=20)
    assert results["search"].status_code == 200 and results["search"].json()["total_count"] > 0


def test_a_statement_past_its_time_cap_is_stopped() -> None:
    index = OfflineIndex(get_index().path, max_seconds=0.2)
    endless = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n"
    with pytest.raises(SearchTooSlow, match="longer than 0.2 s"):
        index.query(endless)
    assert index.query("SELECT count(*) FROM trials")[0][0] > 0  # the connection goes on serving


def test_costly_or_malformed_searches_are_a_422_before_they_run(alice: TestClient) -> None:
    worst = {"condition": ALPHABET, "intervention": ALPHABET, "eligibility_keywords": ALPHABET}
    r = alice.get("/api/trials/search", params=worst)
    assert r.status_code == 422 and "the wildcard a* is too short" in r.json()["detail"]
    r = alice.get("/api/trials/search", params={"condition": "canc* OR tum* OR neo*", "intervention": "che* OR rad*",
                                                "eligibility_keywords": "pat* OR dis*"})
    assert r.status_code == 422 and "7 wildcard terms; at most 6" in r.json()["detail"]
    r = alice.post("/api/stats/trials", json={"search": worst})
    assert r.status_code == 422
    nested = "(" * 990 + "egfr" + ")" * 990  # a RecursionError (500, a 150 KB traceback) before
    r = alice.get("/api/articles/search", params={"q": nested})
    assert r.status_code == 422 and "nested more than 12 levels deep" in r.json()["detail"]
    r = alice.get("/api/articles/search", params={"q": " OR ".join(f"term{i}" for i in range(41))})
    assert r.status_code == 422 and "41 search terms; at most 40" in r.json()["detail"]
    assert alice.get("/api/articles/search", params={"q": "((egfr AND resist*) OR osimertinib)"}).status_code == 200


def test_searches_and_statistics_share_a_rate_limit(db_url: str, db: Database) -> None:
    app = create_app(make_settings(db_url, COLLEAGUE_SEARCHES_PER_MINUTE=2))
    carol = signed_in(app, db, "carol")
    try:
        assert carol.get("/api/articles/search", params={"q": "egfr"}).status_code == 200
        assert carol.post("/api/stats/articles", json={"search": {"query": "egfr"}}).status_code == 200
        r = carol.get("/api/trials/search", params={"condition": "asthma"})
        assert r.status_code == 429 and "Too many searches: at most 2 a minute" in r.json()["detail"]
        assert int(r.headers["retry-after"]) >= 1
    finally:
        carol.__exit__(None, None, None)
