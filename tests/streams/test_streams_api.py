"""The streams API: who may do what, what is stored, and what is refused (with nothing written)."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from backend.db.models import ResearchStream
from backend.db.session import Database
from backend.streams.schemas import MAX_INSTRUCTIONS
from tests.conftest import signed_in
from tests.streams.helpers import make_stream, snapshot


def test_admin_creates_and_everyone_reads(admin: TestClient, alice: TestClient, db: Database) -> None:
    created = make_stream(admin, "EGFR resistance", "Name the mutation.", description="TKI resistance",
                          note="First cut", settings={"pubmed_query": "egfr AND resistance",
                                                      "trial_search": {"condition": "nsclc", "phase": ["PHASE3"]}})
    assert created == {
        "id": created["id"], "name": "EGFR resistance", "description": "TKI resistance",
        "chat_instructions": "Name the mutation.",
        "settings": {"pubmed_query": "egfr AND resistance",
                     "trial_search": {"condition": "nsclc", "phase": ["PHASE3"]}},
        "archived": False, "created_at": created["created_at"], "updated_at": created["updated_at"],
        "updated_by": "root", "current_version_id": created["current_version_id"],
        "current_version_number": 1, "version_count": 1}
    assert admin.get(f"/api/streams/{created['id']}").json() == created
    assert alice.get(f"/api/streams/{created['id']}").json() == {  # a plain user: no instructions, no editors
        k: v for k, v in created.items() if k in ("id", "name", "description", "settings", "archived", "created_at",
                                                  "updated_at")}
    assert [s["name"] for s in alice.get("/api/streams").json()] == ["EGFR resistance"]
    history = admin.get(f"/api/streams/{created['id']}/instructions/history").json()
    assert [(v["id"], v["text"], v["note"], v["created_by"], v["current"]) for v in history] == [
        (created["current_version_id"], "Name the mutation.", "First cut", "root", True)]


SUMMARY = {"id", "name", "description", "settings", "archived", "created_at", "updated_at"}


def test_plain_users_see_no_instructions_and_no_editors(admin: TestClient, alice: TestClient) -> None:
    sid = make_stream(admin, "EGFR resistance", "Secret strategy: focus on T790M.",
                      settings={"pubmed_query": "egfr"})["id"]
    archived = make_stream(admin, "Old", "Old secret.")["id"]
    admin.patch(f"/api/streams/{archived}", json={"archived": True})
    for url in ("/api/streams", "/api/streams?include_archived=true"):
        for stream in alice.get(url).json():
            assert set(stream) == SUMMARY, stream
        assert all({"chat_instructions", "updated_by", "version_count"} <= set(s) for s in admin.get(url).json())
    mine = alice.get(f"/api/streams/{sid}").json()
    assert set(mine) == SUMMARY and mine["settings"] == {"pubmed_query": "egfr"}  # the selector's defaults stay
    assert "Secret" not in alice.get("/api/streams?include_archived=true").text
    assert "root" not in alice.get(f"/api/streams/{sid}").text  # the editor's username
    full = admin.get(f"/api/streams/{sid}").json()
    assert (full["chat_instructions"], full["updated_by"]) == ("Secret strategy: focus on T790M.", "root")


def test_a_stream_without_instructions_has_no_version(admin: TestClient, db: Database) -> None:
    created = make_stream(admin, "Melanoma", None)
    assert created["chat_instructions"] is None and created["current_version_id"] is None
    assert created["version_count"] == 0 and created["settings"] == {}
    assert admin.get(f"/api/streams/{created['id']}/instructions/history").json() == []


def test_update_sets_who_and_when(app: Any, admin: TestClient, alice: TestClient, db: Database) -> None:
    sid = make_stream(admin)["id"]
    with db.session() as s:
        before = s.get(ResearchStream, sid).updated_at
    second = signed_in(app, db, "carol", role="admin")
    r = second.patch(f"/api/streams/{sid}", json={"name": "  EGFR   resistance (TKIs) ",
                                                  "description": "Why\x07 TKIs fail",
                                                  "settings": {"pubmed_query": "egfr"}})
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["name"], body["description"], body["settings"]) == ("EGFR resistance (TKIs)", "Why TKIs fail",
                                                                     {"pubmed_query": "egfr"})
    assert body["updated_by"] == "carol" and body["version_count"] == 1  # no instruction change, no version
    with db.session() as s:
        row = s.get(ResearchStream, sid)
        assert row.updated_at > before and row.settings == {"pubmed_query": "egfr"}
    assert second.patch(f"/api/streams/{sid}", json={"settings": None, "description": None}).json()["settings"] == {}
    assert alice.get(f"/api/streams/{sid}").json()["description"] is None


def test_archive_and_unarchive(admin: TestClient, alice: TestClient) -> None:
    keep = make_stream(admin, "Melanoma")["id"]
    old = make_stream(admin, "Statins")["id"]
    assert admin.patch(f"/api/streams/{old}", json={"archived": True}).json()["archived"] is True
    assert [s["id"] for s in alice.get("/api/streams").json()] == [keep]
    assert [s["id"] for s in alice.get("/api/streams?include_archived=true").json()] == [keep, old]
    assert alice.get(f"/api/streams/{old}").json()["archived"] is True  # still visible: it exists
    assert admin.patch(f"/api/streams/{old}", json={"archived": False}).json()["archived"] is False
    assert [s["id"] for s in alice.get("/api/streams").json()] == [keep, old]


def refused_calls(sid: int, version_id: int) -> list[tuple[str, str, Any]]:
    return [
        ("PATCH", f"/api/streams/{sid}", {"chat_instructions": "Hijacked.", "note": "mine"}),
        ("PATCH", f"/api/streams/{sid}", {"name": ""}),  # an invalid body is still a 403, not a 422
        ("PATCH", f"/api/streams/{sid}", {"archived": True}),
        ("GET", f"/api/streams/{sid}/instructions/history", None),
        ("GET", f"/api/streams/{sid}/instructions/diff", None),
        ("POST", f"/api/streams/{sid}/instructions/restore", {"version_id": version_id}),
    ]


def test_non_admin_is_403_on_a_stream_and_404_on_none(admin: TestClient, alice: TestClient, db: Database) -> None:
    created = make_stream(admin)
    sid, vid = created["id"], created["current_version_id"]
    admin.patch(f"/api/streams/{sid}", json={"chat_instructions": "Second."})
    before = snapshot(db)
    for method, url, body in refused_calls(sid, vid):
        r = alice.request(method, url, json=body)
        assert (r.status_code, r.json()["error"]) == (403, "forbidden"), (method, url, r.text)
    for method, url, body in refused_calls(999, vid):
        r = alice.request(method, url, json=body)
        assert (r.status_code, r.json()["error"]) == (404, "not_found"), (method, url, r.text)
    r = alice.post("/api/streams", json={"name": "Alice's stream"})
    assert r.status_code == 403 and r.json()["detail"] == "Only admins can do this."
    assert snapshot(db) == before


def test_anonymous_is_401(app: Any, admin: TestClient, db: Database) -> None:
    created = make_stream(admin)
    before = snapshot(db)
    anon = TestClient(app)
    calls = [("GET", "/api/streams", None), ("GET", f"/api/streams/{created['id']}", None),
             ("POST", "/api/streams", {"name": "x"}), *refused_calls(created["id"], created["current_version_id"])]
    for method, url, body in calls:
        r = anon.request(method, url, json=body)
        assert (r.status_code, r.json()["error"]) == (401, "unauthorized"), (method, url)
    assert snapshot(db) == before


def test_unknown_ids_are_404_for_admins(admin: TestClient) -> None:
    other = make_stream(admin, "Other")
    sid = make_stream(admin)["id"]
    for method, url, body in [("GET", "/api/streams/999", None), *refused_calls(999, 1)]:
        r = admin.request(method, url, json=body)
        assert r.status_code == 404 and r.json()["detail"] == "Research stream 999 not found.", (method, url)
    foreign = other["current_version_id"]  # a version of another stream is not a version of this one
    for method, url, body in [("GET", f"/api/streams/{sid}/instructions/diff?from={foreign}", None),
                              ("GET", f"/api/streams/{sid}/instructions/diff?to=12345", None),
                              ("POST", f"/api/streams/{sid}/instructions/restore", {"version_id": foreign})]:
        r = admin.request(method, url, json=body)
        assert r.status_code == 404 and "not found in research stream" in r.json()["detail"], (method, url)


def _messages(r: Any) -> list[str]:
    assert r.status_code == 422 and r.json()["error"] == "invalid_input", r.text
    return [d["msg"] for d in r.json()["errors"]]


def test_validation(admin: TestClient, db: Database) -> None:
    sid = make_stream(admin)["id"]
    before = snapshot(db)
    too_long = "x" * (MAX_INSTRUCTIONS + 1)
    assert _messages(admin.patch(f"/api/streams/{sid}", json={"chat_instructions": too_long})) == [
        "chat_instructions is 10,001 characters long; the limit is 10,000."]
    assert _messages(admin.patch(f"/api/streams/{sid}", json={"name": " \t "})) == ["name must not be empty."]
    assert _messages(admin.patch(f"/api/streams/{sid}", json={"name": None})) == ["name must not be empty."]
    assert _messages(admin.patch(f"/api/streams/{sid}", json={"archived": None})) == ["archived cannot be null."]
    assert _messages(admin.patch(f"/api/streams/{sid}", json={"note": "why"})) == [
        "note describes an instructions change; send it with chat_instructions."]
    r = admin.patch(f"/api/streams/{sid}", json={"instructions": "typo"})
    assert _messages(r) and r.json()["errors"][0]["loc"] == ["body", "instructions"]
    r = admin.patch(f"/api/streams/{sid}", json={"settings": {"trial_search": {"phase": ["PHASE9"]}}})
    assert _messages(r) and r.json()["errors"][0]["loc"][:4] == ["body", "settings", "trial_search", "phase"]
    assert _messages(admin.post("/api/streams", json={"name": ""})) == ["name must not be empty."]
    assert _messages(admin.post("/api/streams", json={"name": "n" * 201})) == [
        "name is 201 characters long; the limit is 200."]
    assert snapshot(db) == before
    # exactly at the limit is fine, and the limit counts the cleaned text
    at_limit = {"chat_instructions": "\x00" + "y" * MAX_INSTRUCTIONS}
    assert admin.patch(f"/api/streams/{sid}", json=at_limit).status_code == 200


def test_control_characters_are_stripped(admin: TestClient, db: Database) -> None:
    dirty = "  Line one\x00\x1b[1m bold\r\n\tindented\x7f\x85\rlast\x0c  \n"
    created = make_stream(admin, "Dirty\nname\x01", dirty, note="a\nnote\x02")
    assert created["name"] == "Dirty name"
    assert created["chat_instructions"] == "Line one[1m bold\n\tindented\nlast"
    with db.session() as s:
        assert s.get(ResearchStream, created["id"]).chat_instructions == "Line one[1m bold\n\tindented\nlast"
    history = admin.get(f"/api/streams/{created['id']}/instructions/history").json()
    assert history[0]["note"] == "a note"


def test_names_are_unique_ignoring_case(admin: TestClient, db: Database) -> None:
    make_stream(admin, "Melanoma")
    sid = make_stream(admin, "EGFR")["id"]
    before = snapshot(db)
    r = admin.post("/api/streams", json={"name": "MELANOMA"})
    assert r.status_code == 409 and "already exists" in r.json()["detail"]
    assert admin.patch(f"/api/streams/{sid}", json={"name": "melanoma"}).status_code == 409
    assert snapshot(db) == before
    assert admin.patch(f"/api/streams/{sid}", json={"name": "egfr"}).json()["name"] == "egfr"  # its own name


@pytest.mark.parametrize("value", [{"unknown": 1}, {"trial_search": {"min_age": 70, "max_age": 20}},
                                   {"trial_search": {"condition": "x" * 501}}, {"pubmed_query": "q" * 2001}])
def test_bad_settings_are_422(admin: TestClient, value: dict[str, Any]) -> None:
    assert admin.post("/api/streams", json={"name": "x", "settings": value}).status_code == 422
