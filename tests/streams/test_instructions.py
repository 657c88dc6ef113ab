"""Instruction history: every change kept with who, when and note; diffs between versions; restores."""

from __future__ import annotations

from starlette.testclient import TestClient

from backend.db.models import InstructionVersion, ResearchStream
from backend.db.session import Database
from tests.streams.helpers import make_stream, snapshot

V1 = "Name the mutation.\nSay the TKI generation."
V2 = "Name the mutation (exon 19, L858R, T790M).\nSay the TKI generation.\nFlag prior osimertinib."


def history(admin: TestClient, sid: int) -> list[dict]:
    r = admin.get(f"/api/streams/{sid}/instructions/history")
    assert r.status_code == 200, r.text
    return r.json()


def test_every_change_is_a_version_newest_first(admin: TestClient, alice: TestClient, db: Database) -> None:
    sid = make_stream(admin, instructions=V1, note="First")["id"]
    r = admin.patch(f"/api/streams/{sid}", json={"chat_instructions": V2, "note": "Name the mutations"})
    assert r.status_code == 200 and r.json()["chat_instructions"] == V2 and r.json()["version_count"] == 2
    same = admin.patch(f"/api/streams/{sid}", json={"chat_instructions": f"  {V2}\r\n", "note": "noise"})
    assert same.json()["version_count"] == 2  # the same text again is not a change
    cleared = admin.patch(f"/api/streams/{sid}", json={"chat_instructions": "  ", "note": "Start over"}).json()
    assert cleared["chat_instructions"] is None and cleared["version_count"] == 3
    versions = history(admin, sid)
    assert [(v["text"], v["note"], v["created_by"], v["current"]) for v in versions] == [
        (None, "Start over", "root", True), (V2, "Name the mutations", "root", False), (V1, "First", "root", False)]
    assert versions[0]["id"] == cleared["current_version_id"] > versions[1]["id"] > versions[2]["id"]
    assert versions[0]["created_at"] >= versions[1]["created_at"] >= versions[2]["created_at"]
    assert admin.get(f"/api/streams/{sid}").json()["chat_instructions"] is None
    with db.session() as s:
        rows = s.query(InstructionVersion).filter_by(stream_id=sid).order_by(InstructionVersion.id).all()
        assert [r.chat_instructions for r in rows] == [V1, V2, None]
        assert s.get(ResearchStream, sid).chat_instructions is None


def test_diff_between_two_versions(admin: TestClient) -> None:
    sid = make_stream(admin, instructions=V1)["id"]
    admin.patch(f"/api/streams/{sid}", json={"chat_instructions": V2})
    v2, v1 = (v["id"] for v in history(admin, sid))
    r = admin.get(f"/api/streams/{sid}/instructions/diff?from={v1}&to={v2}")
    assert r.status_code == 200, r.text
    d = r.json()
    assert (d["from_version"]["id"], d["to_version"]["id"], d["added"], d["removed"]) == (v1, v2, 2, 1)
    assert d["unified"] == (f"--- version {v1}\n+++ version {v2}\n@@ -1,2 +1,3 @@\n-Name the mutation.\n"
                            "+Name the mutation (exon 19, L858R, T790M).\n Say the TKI generation.\n"
                            "+Flag prior osimertinib.")
    assert [(x["op"], x["text"], x["old_line"], x["new_line"]) for x in d["lines"]] == [
        ("remove", "Name the mutation.", 1, None),
        ("add", "Name the mutation (exon 19, L858R, T790M).", None, 1),
        ("context", "Say the TKI generation.", 2, 2),
        ("add", "Flag prior osimertinib.", None, 3)]
    default = admin.get(f"/api/streams/{sid}/instructions/diff").json()  # previous -> current
    assert default["unified"] == d["unified"] and default["to_version"]["current"] is True
    backwards = admin.get(f"/api/streams/{sid}/instructions/diff?from={v2}&to={v1}").json()
    assert (backwards["added"], backwards["removed"]) == (1, 2)
    same = admin.get(f"/api/streams/{sid}/instructions/diff?from={v1}&to={v1}").json()
    assert same["unified"] == "" and same["added"] == same["removed"] == 0 and len(same["lines"]) == 2
    first = admin.get(f"/api/streams/{sid}/instructions/diff?to={v1}").json()  # nothing before the first
    assert first["from_version"] is None and first["added"] == 2 and first["unified"].startswith("--- (empty)")


def test_diff_of_a_stream_without_history(admin: TestClient) -> None:
    sid = make_stream(admin, instructions=None)["id"]
    d = admin.get(f"/api/streams/{sid}/instructions/diff").json()
    assert (d["from_version"], d["to_version"], d["unified"], d["lines"]) == (None, None, "", [])


def test_restore_adds_a_version_with_the_old_text(admin: TestClient, alice: TestClient, db: Database) -> None:
    sid = make_stream(admin, instructions=V1)["id"]
    admin.patch(f"/api/streams/{sid}", json={"chat_instructions": V2, "note": "Longer"})
    v2, v1 = (v["id"] for v in history(admin, sid))
    r = admin.post(f"/api/streams/{sid}/instructions/restore", json={"version_id": v1, "note": "too long"})
    assert r.status_code == 200, r.text
    assert r.json()["chat_instructions"] == V1 and r.json()["version_count"] == 3
    versions = history(admin, sid)
    assert [(v["text"], v["note"], v["current"]) for v in versions] == [
        (V1, "Restored version 1: too long", True), (V2, "Longer", False), (V1, "Created with the stream", False)]
    assert r.json()["current_version_id"] == versions[0]["id"] not in (v1, v2)
    before = snapshot(db)
    again = admin.post(f"/api/streams/{sid}/instructions/restore", json={"version_id": v1})
    assert again.status_code == 409 and "same text as the current instructions" in again.json()["detail"]
    assert alice.post(f"/api/streams/{sid}/instructions/restore", json={"version_id": v2}).status_code == 403
    assert admin.post(f"/api/streams/{sid}/instructions/restore", json={}).status_code == 422
    assert snapshot(db) == before
    back = admin.post(f"/api/streams/{sid}/instructions/restore", json={"version_id": v2}).json()
    assert back["chat_instructions"] == V2 and history(admin, sid)[0]["note"] == "Restored version 2"


def test_stale_edit_is_409_and_writes_nothing(admin: TestClient, db: Database) -> None:
    created = make_stream(admin, instructions=V1)
    sid, seen = created["id"], created["current_version_id"]
    fresh = admin.patch(f"/api/streams/{sid}", json={"chat_instructions": V2, "expected_version_id": seen})
    assert fresh.status_code == 200
    before = snapshot(db)
    stale = admin.patch(f"/api/streams/{sid}", json={"chat_instructions": "Mine.", "expected_version_id": seen,
                                                     "name": "Renamed"})
    assert stale.status_code == 409 and "changed since version" in stale.json()["detail"]
    assert snapshot(db) == before
