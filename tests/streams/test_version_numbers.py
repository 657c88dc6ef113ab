"""Version numbers count within a stream (v1, v2, v3 in each), whatever other streams save in between; the
migration numbers existing rows the same way, per stream in the order they were saved."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from starlette.testclient import TestClient

from backend.db.migrate import downgrade, upgrade
from tests.streams.helpers import make_stream


def _history(admin: TestClient, sid: int) -> list[dict]:
    r = admin.get(f"/api/streams/{sid}/instructions/history")
    assert r.status_code == 200, r.text
    return r.json()


def test_each_stream_counts_its_own_versions(admin: TestClient) -> None:
    a = make_stream(admin, "EGFR", "A one.")["id"]
    b = make_stream(admin, "Statins", "B one.")["id"]
    admin.patch(f"/api/streams/{a}", json={"chat_instructions": "A two."})
    admin.patch(f"/api/streams/{b}", json={"chat_instructions": "B two."})
    latest = admin.patch(f"/api/streams/{a}", json={"chat_instructions": "A three."}).json()
    assert (latest["current_version_number"], latest["version_count"]) == (3, 3)
    assert [(v["number"], v["text"]) for v in _history(admin, a)] == [(3, "A three."), (2, "A two."), (1, "A one.")]
    assert [(v["number"], v["text"]) for v in _history(admin, b)] == [(2, "B two."), (1, "B one.")]

    first_a = _history(admin, a)[-1]["id"]  # the API still names a version by its id
    restored = admin.post(f"/api/streams/{a}/instructions/restore", json={"version_id": first_a}).json()
    assert (restored["current_version_number"], restored["version_count"]) == (4, 4)
    newest = _history(admin, a)[0]
    assert (newest["number"], newest["note"], newest["text"]) == (4, "Restored version 1", "A one.")
    listed = {s["id"]: s for s in admin.get("/api/streams").json()}
    assert (listed[a]["version_count"], listed[a]["current_version_number"]) == (4, 4)
    assert (listed[b]["version_count"], listed[b]["current_version_number"]) == (2, 2)

    diff = admin.get(f"/api/streams/{a}/instructions/diff").json()
    assert (diff["from_version"]["number"], diff["to_version"]["number"]) == (3, 4)
    assert diff["unified"].startswith("--- version 3\n+++ version 4")


def test_a_stale_edit_names_the_stream_numbers(admin: TestClient) -> None:
    other = make_stream(admin, "Other", "O.")["id"]
    created = make_stream(admin, "Mine", "One.")
    admin.patch(f"/api/streams/{other}", json={"chat_instructions": "O2."})
    sid, seen = created["id"], created["current_version_id"]
    admin.patch(f"/api/streams/{sid}", json={"chat_instructions": "Two.", "expected_version_id": seen})
    stale = admin.patch(f"/api/streams/{sid}", json={"chat_instructions": "Three.", "expected_version_id": seen})
    assert stale.status_code == 409
    assert "since version 1 (the current version is 2)" in stale.json()["detail"]


def test_the_migration_numbers_existing_versions_per_stream(empty_db: str) -> None:
    upgrade(empty_db, "0008_chat_turns")
    engine = sa.create_engine(empty_db)
    with engine.begin() as conn:
        for sid, name in ((1, "A"), (2, "B")):
            conn.execute(sa.text("INSERT INTO research_streams (id, name, archived, created_at, updated_at) "
                                 "VALUES (:id, :name, false, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"),
                         {"id": sid, "name": name})
        # interleaved saves: A, B, A, A, B (the shared sequence read A as v1, v3, v4)
        for vid, sid in enumerate((1, 2, 1, 1, 2), start=1):
            conn.execute(sa.text("INSERT INTO stream_instruction_versions (id, stream_id, chat_instructions, "
                                 "created_at) VALUES (:id, :sid, :text, CURRENT_TIMESTAMP)"),
                         {"id": vid, "sid": sid, "text": f"text {vid}"})
    upgrade(empty_db)
    engine.dispose()
    with engine.connect() as conn:
        rows = conn.execute(sa.text("SELECT id, stream_id, number FROM stream_instruction_versions ORDER BY id")).all()
    assert [tuple(r) for r in rows] == [(1, 1, 1), (2, 2, 1), (3, 1, 2), (4, 1, 3), (5, 2, 2)]
    with engine.begin() as conn, pytest.raises(sa.exc.IntegrityError):  # one number per stream
        conn.execute(sa.text("INSERT INTO stream_instruction_versions (id, stream_id, number, created_at) "
                             "VALUES (6, 1, 3, CURRENT_TIMESTAMP)"))
    downgrade(empty_db, "0008_chat_turns")
    engine.dispose()
    assert "number" not in {c["name"] for c in sa.inspect(engine).get_columns("stream_instruction_versions")}
    engine.dispose()

