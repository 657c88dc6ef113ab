"""The demo streams (COLLEAGUE_DEMO=1) are valid stream data with a history to show."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from backend.db.models import InstructionVersion, ResearchStream
from backend.db.session import Database
from backend.seed import DEMO_STREAMS, seed_demo
from tests.conftest import signed_in


def egfr_of(listed: list[dict[str, Any]]) -> dict[str, Any]:
    return next(s for s in listed if s["name"] == "EGFR-resistant NSCLC")


def test_demo_streams_are_seeded_once_with_history(app: Any, db: Database) -> None:
    seed_demo(db)
    seed_demo(db)  # a restart seeds nothing twice
    with db.session() as s:
        assert s.query(ResearchStream).count() == len(DEMO_STREAMS)
        assert s.query(InstructionVersion).count() == sum(len(d.versions) for d in DEMO_STREAMS)
    viewer = signed_in(app, db, "viewer")
    listed = viewer.get("/api/streams").json()
    assert [s["name"] for s in listed] == ["Degenerative disc disease", "EGFR-resistant NSCLC",
                                           "Immunotherapy in melanoma"]  # the archived one is hidden
    assert egfr_of(listed)["settings"]["trial_search"]["status"] == ["RECRUITING", "NOT_YET_RECRUITING"]
    boss = TestClient(app)
    assert boss.post("/api/auth/login", json={"username": "admin", "password": "admin"}).status_code == 200
    egfr = egfr_of(boss.get("/api/streams").json())
    assert egfr["version_count"] == 2 and egfr["updated_by"] == "admin"
    history = boss.get(f"/api/streams/{egfr['id']}/instructions/history").json()
    assert [v["created_by"] for v in history] == ["admin", "admin"] and history[0]["text"] == egfr["chat_instructions"]
    diff = boss.get(f"/api/streams/{egfr['id']}/instructions/diff").json()
    assert diff["added"] and diff["removed"] and "+- Separate on-target resistance" in diff["unified"]
    viewer.__exit__(None, None, None)
