"""The note stays where it belongs while the assistant works with it: never in a log line (every logger
at DEBUG), a usage or analytics record, an error body or a URL; and a request body with a field the API
does not know is a 422 that does not echo the note."""

from __future__ import annotations

import logging

import pytest
import sqlalchemy as sa
from starlette.testclient import TestClient

from backend.db.session import Database
from tests.conftest import signed_in
from tests.screening_api.conftest import NOTE, NOTE_MARKERS, TRIALS
from tests.screening_chat.conftest import ask, context, screened

USAGE_TABLES = ("daily_usage", "model_usage", "rate_limit_counters")


def test_the_note_is_in_no_log_usage_record_error_or_url(demo_app: object, db: Database,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    alice = signed_in(demo_app, db, "alice")
    admin = signed_in(demo_app, db, "root", role="admin")
    try:
        done = screened(alice, TRIALS)
        excluded = next(t for t in done.shortlist if t["verdict"] == "EXCLUDED")
        urls: list[str] = []
        for question in (f"Why is {excluded['nct_id']} excluded?", "what would make her eligible for the first one",
                         "make the report for her doctor", "She also had capecitabine, update her profile"):
            turn = ask(alice, question, context(done))
            assert turn.tools and not any(e.data.get("is_error") for e in turn.events if e.event == "tool_complete")
            urls += [c["data"]["report"]["html_url"] for c in turn.cards if c["type"] == "screening_report"]
        assert any(s in turn.text for s in ("profile edit", "card")) and urls
        bodies = [
            alice.post("/api/patients", json={"note": NOTE, "notes": NOTE}).text,  # unknown field
            alice.patch(f"/api/patients/{done.patient['id']}", json={"note": NOTE, "extra": NOTE}).text,
            alice.post(f"/api/patients/{done.patient['id']}/screenings", json={"nct_id": TRIALS, "note": NOTE}).text,
            alice.post(f"/api/screenings/{done.detail['id']}/reports", json={"title": NOTE}).text,  # too long
            admin.get("/api/admin/usage").text,
        ]
        with db.session() as s:
            rows = [repr(list(s.execute(sa.text(f"SELECT * FROM {t}")))) for t in USAGE_TABLES]
    finally:
        for client in (alice, admin):
            client.__exit__(None, None, None)
    logged = caplog.text + repr([(r.args, r.__dict__.get("extra")) for r in caplog.records])
    assert caplog.records  # (the capture saw the requests' logging)
    for text in [logged, *bodies, *rows, *urls]:
        for marker in NOTE_MARKERS:
            assert marker not in text


@pytest.mark.parametrize("path, body", [
    ("/api/patients", {"note": "A note.", "lable": "typo"}),
    ("/api/patients/{pid}/screenings", {"nct_ids": TRIALS[:1], "max_candidates": 5}),
    ("/api/patients/{pid}/screenings", {"nct_id": TRIALS[:1]}),
    ("/api/screenings/{sid}/reports", {"nct_ids": [], "format": "pdf"}),
])
def test_unknown_request_fields_are_a_422(demo_alice: TestClient, path: str, body: dict[str, object]) -> None:
    done = screened(demo_alice, TRIALS[:1])
    r = demo_alice.post(path.format(pid=done.patient["id"], sid=done.detail["id"]), json=body)
    assert r.status_code == 422, r.text
    assert "extra" in r.text.lower() or "not permitted" in r.text.lower()
    r = demo_alice.patch(f"/api/patients/{done.patient['id']}", json={"label": "ok", "colour": "red"})
    assert r.status_code == 422
