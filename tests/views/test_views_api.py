"""Saved views over HTTP, on SQLite and PostgreSQL: the working state per user and page, named views,
owner-only access and bounded bodies."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from backend.db.models import SavedView
from backend.db.session import Database

STATE: dict[str, Any] = {
    "search": {"condition": "melanoma"},
    "aiColumns": [{"name": "Brain mets?", "criteria": "Allows brain metastases", "type": "boolean", "filter": "yes"}],
    "sort": [{"id": "ai:Brain mets?", "desc": False}],
    "hidden": ["sponsor"],
    "charts": ["phase"],
    "selected": ["NCT00000001", "NCT00000002"],
}


def test_working_state_is_kept_per_user_and_page(alice: TestClient, bob: TestClient, db: Database) -> None:
    empty = alice.get("/api/views/trialscout/current")
    assert empty.status_code == 200 and empty.json()["state"] is None

    assert alice.put("/api/views/trialscout/current", json={"state": STATE}).status_code == 200
    later = {**STATE, "selected": ["NCT00000003"]}
    assert alice.put("/api/views/trialscout/current", json={"state": later}).json()["state"] == later

    assert alice.get("/api/views/trialscout/current").json()["state"] == later
    assert alice.get("/api/views/tablizer/current").json()["state"] is None  # another page
    assert bob.get("/api/views/trialscout/current").json()["state"] is None  # another user
    with db.session() as s:
        assert s.query(SavedView).filter_by(app="trialscout", name="").count() == 1  # replaced, not appended

    assert bob.delete("/api/views/trialscout/current").status_code == 204  # bob's own (none): alice's stays
    assert alice.get("/api/views/trialscout/current").json()["state"] == later
    assert alice.delete("/api/views/trialscout/current").status_code == 204
    assert alice.get("/api/views/trialscout/current").json()["state"] is None


def test_named_views_save_list_rename_delete(alice: TestClient, bob: TestClient) -> None:
    made = alice.post("/api/views/trialscout", json={"name": " Brain mets ", "state": STATE})
    assert made.status_code == 201
    view = made.json()
    assert view["name"] == "Brain mets" and view["state"] == STATE

    dup = alice.post("/api/views/trialscout", json={"name": "Brain mets", "state": {}})
    assert dup.status_code == 409 and dup.json()["error"] == "conflict"
    assert bob.post("/api/views/trialscout", json={"name": "Brain mets", "state": {}}).status_code == 201

    listed = alice.get("/api/views/trialscout").json()
    assert [v["name"] for v in listed] == ["Brain mets"]  # the working state is not a named view
    alice.put("/api/views/trialscout/current", json={"state": {}})
    assert [v["name"] for v in alice.get("/api/views/trialscout").json()] == ["Brain mets"]

    renamed = alice.patch(f"/api/views/trialscout/{view['id']}", json={"name": "Mets allowed"})
    assert renamed.status_code == 200 and renamed.json()["name"] == "Mets allowed"
    assert renamed.json()["state"] == STATE

    # Owner-only: another user (or the wrong page) sees nothing there.
    for client, app in ((bob, "trialscout"), (alice, "tablizer")):
        assert client.get(f"/api/views/{app}/{view['id']}").status_code == 404
        assert client.patch(f"/api/views/{app}/{view['id']}", json={"name": "x"}).status_code == 404
        gone = client.delete(f"/api/views/{app}/{view['id']}")
        assert gone.status_code == 404 and gone.json()["error"] == "not_found"

    assert alice.delete(f"/api/views/trialscout/{view['id']}").status_code == 204
    assert alice.get(f"/api/views/trialscout/{view['id']}").status_code == 404
    assert alice.get("/api/views/trialscout").json() == []


def test_bad_view_requests_are_refused(alice: TestClient) -> None:
    assert alice.put("/api/views/trialscout/current", json={"state": {}, "extra": 1}).status_code == 422
    assert alice.put("/api/views/nowhere/current", json={"state": {}}).status_code == 422
    assert alice.post("/api/views/trialscout", json={"name": "   ", "state": {}}).status_code == 422
    too_big = {"selected": ["x" * 1000] * 140}
    r = alice.put("/api/views/trialscout/current", json={"state": too_big})
    assert r.status_code == 422 and "at most" in r.json()["detail"]
    huge = alice.put("/api/views/trialscout/current", content=b'{"state": {"a": "' + b"x" * 200_000 + b'"}}',
                     headers={"content-type": "application/json"})
    assert huge.status_code == 413
    assert alice.get("/api/views/trialscout/current").json()["state"] is None


def test_views_need_a_session(app: Any) -> None:
    with TestClient(app) as anonymous:
        assert anonymous.get("/api/views/trialscout/current").status_code == 401
