"""POST /api/stats/*: facet counts over the whole offline result set, checked against figures computed
without the facet table (the raw data files, and every page of the table's own search)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.sources.raw_corpus import RawCorpus, read_raw_corpus


@pytest.fixture(scope="module")
def raw() -> RawCorpus:
    return read_raw_corpus()


def _facet(body: dict[str, Any], name: str) -> dict[str, Any]:
    return next(f for f in body["facets"] if f["facet"] == name)


def _counts(facet: dict[str, Any]) -> dict[str, int]:
    return {b["value"]: b["count"] for b in facet["buckets"]}


def _all_trials(client: TestClient, **params: Any) -> list[dict[str, Any]]:
    """Every page of TrialScout's own search (the table's code path, not the statistics')."""
    trials: list[dict[str, Any]] = []
    token = None
    while True:
        r = client.get("/api/trials/search", params={**params, "page_size": 100,
                                                       **({"page_token": token} if token else {})})
        assert r.status_code == 200, r.text
        trials += r.json()["trials"]
        token = r.json()["next_page_token"]
        if not token:
            return trials


def test_whole_corpus_phase_and_status_match_the_raw_files(alice: TestClient, raw: RawCorpus) -> None:
    r = alice.post("/api/stats/trials", json={"facets": ["phase", "status"], "limit": 100})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["source"] == "offline" and body["sampled"] is False
    assert body["total"] == len(raw.trials)
    phases = Counter(p for t in raw.trials.values() for p in dict.fromkeys(t.phases))
    assert _counts(_facet(body, "phase")) == dict(phases)
    assert _facet(body, "phase")["missing"] == sum(1 for t in raw.trials.values() if not t.phases)
    statuses = Counter(t.status for t in raw.trials.values() if t.status)
    assert _counts(_facet(body, "status")) == dict(statuses)
    assert _facet(body, "status")["other"] == 0


def test_a_search_counts_every_match_not_just_a_page(alice: TestClient) -> None:
    search = {"condition": "melanoma", "status": ["RECRUITING", "NOT_YET_RECRUITING"]}
    trials = _all_trials(alice, **search)
    assert len(trials) > 25  # more than one page of the table
    r = alice.post("/api/stats/trials", json={"search": search, "limit": 100, "facets": [
        "phase", "status", "study_type", "sponsor", "start_year", "condition", "enrollment", "country"]})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["total"] == len(trials)
    assert _counts(_facet(body, "status")) == dict(Counter(t["status"] for t in trials))
    assert _counts(_facet(body, "phase")) == dict(Counter(p for t in trials for p in t["phase"]))
    assert _counts(_facet(body, "study_type")) == dict(Counter(t["study_type"] for t in trials if t["study_type"]))
    assert _counts(_facet(body, "sponsor")) == dict(Counter(t["sponsor"] for t in trials if t["sponsor"]))
    assert _counts(_facet(body, "start_year")) == dict(
        Counter(t["start_date"][:4] for t in trials if t["start_date"]))
    years = [b["value"] for b in _facet(body, "start_year")["buckets"]]
    assert years == sorted(years)  # a timeline is in order, not by count
    conditions = Counter(c for t in trials for c in dict.fromkeys(t["conditions"]))
    shown = _counts(_facet(body, "condition"))
    assert shown == {c: conditions[c] for c in shown} and _facet(body, "condition")["distinct"] == len(conditions)
    assert min(shown.values()) >= max(n for c, n in conditions.items() if c not in shown)
    enrollment = _facet(body, "enrollment")
    assert enrollment["kind"] == "histogram"
    assert _counts(enrollment)["100-249"] == sum(1 for t in trials if t["enrollment"] is not None
                                                 and 100 <= t["enrollment"] < 250)
    assert enrollment["missing"] == sum(1 for t in trials if t["enrollment"] is None)
    details = [alice.get(f"/api/trials/{t['nct_id']}").json() for t in trials]
    countries = Counter(c for d in details for c in dict.fromkeys(loc["country"] for loc in d["locations"]
                                                                  if loc.get("country")))
    assert _counts(_facet(body, "country")) == dict(countries)


def test_the_limit_keeps_the_top_values_and_counts_the_rest(alice: TestClient) -> None:
    search = {"condition": "melanoma", "status": ["RECRUITING", "NOT_YET_RECRUITING"]}
    trials = _all_trials(alice, **search)
    r = alice.post("/api/stats/trials", json={"search": search, "facets": ["condition"], "limit": 3})
    facet = _facet(r.json(), "condition")
    conditions = Counter(c for t in trials for c in dict.fromkeys(t["conditions"]))
    assert len(facet["buckets"]) == 3
    assert facet["buckets"][0] == {"value": conditions.most_common(1)[0][0], "count": conditions.most_common(1)[0][1]}
    assert facet["other"] == sum(conditions.values()) - sum(b["count"] for b in facet["buckets"])
    assert facet["distinct"] == len(conditions)


def test_facet_filters_narrow_like_the_search_filters(alice: TestClient) -> None:
    """{"phase": ["PHASE3"]} as a facet filter counts what the search's own phase filter finds."""
    search = {"condition": "breast cancer"}
    by_search = _all_trials(alice, **search, phase=["PHASE3"])
    r = alice.post("/api/stats/trials", json={"search": search, "filters": {"phase": ["PHASE3"]},
                                               "facets": ["phase", "status"]})
    body = r.json()
    assert body["total"] == len(by_search) > 0
    assert body["filters"] == {"phase": ["PHASE3"]}
    assert _counts(_facet(body, "status")) == dict(Counter(t["status"] for t in by_search))
    both = alice.post("/api/stats/trials", json={"search": search, "facets": ["status"],
                                                  "filters": {"phase": ["PHASE3"], "status": ["COMPLETED"]}})
    assert both.json()["total"] == sum(1 for t in by_search if t["status"] == "COMPLETED")


def test_article_stats_count_every_match(alice: TestClient) -> None:
    query = "breast OR melanoma"
    articles: list[dict[str, Any]] = []
    page = 1
    while True:
        r = alice.get("/api/articles/search", params={"q": query, "page": page, "page_size": 100})
        articles += r.json()["articles"]
        if len(articles) >= r.json()["total_count"]:
            break
        page += 1
    assert len(articles) > 100
    r = alice.post("/api/stats/articles", json={"search": {"query": query}, "limit": 100})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["total"] == len(articles)
    assert _counts(_facet(body, "year")) == dict(Counter(str(a["year"]) for a in articles if a["year"]))
    assert _counts(_facet(body, "publication_type")) == dict(
        Counter(p for a in articles for p in dict.fromkeys(a["publication_types"])))
    journals = Counter(a["journal"] for a in articles if a["journal"])
    assert _facet(body, "journal")["buckets"][0]["count"] == journals.most_common(1)[0][1]
    mesh = Counter(m for a in articles for m in dict.fromkeys(a["mesh_terms"]))
    assert _facet(body, "mesh")["buckets"][0] == {"value": mesh.most_common(1)[0][0],
                                                   "count": mesh.most_common(1)[0][1]}
    narrowed = alice.post("/api/stats/articles", json={"search": {"query": query},
                                                         "filters": {"publication_type": ["Review"]}})
    assert narrowed.json()["total"] == sum(1 for a in articles if "Review" in a["publication_types"])


@pytest.mark.parametrize(("body", "message"), [
    ({"facets": ["bogus"]}, "facets"),
    ({"filters": {"enrollment": ["0-9"]}}, "cannot filter on 'enrollment'"),
    ({"filters": {"phase": []}}, "needs 1 to 50 values"),
    ({"search": {"phase": ["PHASE9"]}}, "phase"),
    ({"search": {"min_age": 60, "max_age": 18}}, "must not be greater than max_age"),
    ({"search": {"condition": "melanoma", "sql": "1; DROP TABLE trials"}}, "sql"),
    ({"limit": 0}, "limit"),
])
def test_bad_requests_are_clear_422s(alice: TestClient, body: dict[str, Any], message: str) -> None:
    r = alice.post("/api/stats/trials", json=body)
    assert r.status_code == 422, r.text
    assert message in r.text


def test_articles_need_a_query_and_a_readable_one(alice: TestClient) -> None:
    assert alice.post("/api/stats/articles", json={}).status_code == 422
    r = alice.post("/api/stats/articles", json={"search": {"query": '"unbalanced'}})
    assert r.status_code == 422, r.text


def test_signed_out_is_401(app: Any) -> None:
    with TestClient(app) as anonymous:
        assert anonymous.post("/api/stats/trials", json={}).status_code == 401
        assert anonymous.post("/api/stats/articles", json={"search": {"query": "x"}}).status_code == 401
