"""Patients over HTTP: the profile extracted on create, versioned edits, owner-only access, deletion of
everything derived, and a note that never leaves in a log line or an error body."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from starlette.testclient import TestClient

from backend.db.session import Database
from backend.screening.models import MAX_NOTE_CHARS
from tests.fakes.anthropic_server import Script
from tests.screening_api.conftest import (
    NOTE,
    NOTE_MARKERS,
    PROFILE_JSON,
    TRIALS,
    ScriptedModel,
    counts,
    create_patient,
    kinds,
    screen,
)


def test_create_reads_the_profile_from_the_note(alice: TestClient, model: ScriptedModel) -> None:
    created = create_patient(alice)
    assert created["profile"]["age"] == 62 and created["profile"]["sex"] == "female"
    assert created["profile"]["key_facts"]["prior_therapies"] == ["trastuzumab", "pertuzumab"]
    assert created["label"] == PROFILE_JSON["summary"]  # no label given: the profile's summary
    assert created["note"] == NOTE
    assert created["version"]["number"] == 1 and created["version"]["edited"] is False

    assert [p["id"] for p in alice.get("/api/patients").json()] == [created["id"]]
    listed = alice.get("/api/patients").json()[0]
    assert "note" not in listed  # the list shows labels, not health data
    assert alice.get(f"/api/patients/{created['id']}").json() == created


def test_the_demo_model_reads_a_profile_offline(demo_alice: TestClient) -> None:
    created = create_patient(demo_alice, label="Bed 4")
    assert created["label"] == "Bed 4"
    assert created["profile"]["age"] == 62
    assert created["profile"]["sex"] == "female"
    assert any("breast" in c.lower() for c in created["profile"]["conditions"])


def test_a_model_that_fails_leaves_the_local_profile(alice: TestClient, model: ScriptedModel,
                                                     db: Database) -> None:
    model.fake.script(Script.http_error(529, "overloaded_error", should_retry=False))
    created = create_patient(alice)
    assert len(model.fake.requests) == 1  # the model was asked, and failed
    assert created["profile"]["age"] == 62 and created["profile"]["sex"] == "female"  # read by the local rules
    assert created["version"]["number"] == 1


def test_edits_make_versions_and_unused_ones_go(alice: TestClient, model: ScriptedModel, db: Database) -> None:
    patient = create_patient(alice)
    pid = patient["id"]
    profile = {**patient["profile"], "age": 63, "summary": "Corrected age"}
    edited = alice.patch(f"/api/patients/{pid}", json={"profile": profile}).json()
    assert edited["profile"]["age"] == 63 and edited["note"] == NOTE
    assert edited["version"]["number"] == 2 and edited["version"]["edited"] is True
    assert [v["number"] for v in edited["versions"]] == [2]  # version 1 was used by no screening

    _, events = screen(alice, pid, nct_ids=TRIALS[:1])
    assert kinds(events)[-1] == "complete"
    assert events[0].data["version_id"] == edited["version"]["id"]
    assert events[0].data["profile"]["age"] == 63  # the screening used the edited profile

    renamed = alice.patch(f"/api/patients/{pid}", json={"label": "Renamed"}).json()
    assert renamed["label"] == "Renamed" and renamed["version"]["number"] == 2  # a label is no new version

    new_note = NOTE.replace("62-year-old", "64-year-old")
    reread = alice.patch(f"/api/patients/{pid}", json={"note": new_note}).json()
    assert reread["version"]["number"] == 3 and reread["version"]["edited"] is False  # read again
    assert reread["note"] == new_note
    assert [v["number"] for v in reread["versions"]] == [3, 2]  # 2 is kept: a screening refers to it
    assert counts(db)["patient_versions"] == 2

    unchanged = alice.patch(f"/api/patients/{pid}", json={"note": new_note}).json()
    assert unchanged["version"]["number"] == 3
    huge = {**profile, "keywords": ["lymphoma"] * 5_000}
    r = alice.patch(f"/api/patients/{pid}", json={"profile": huge})
    assert r.status_code == 422 and "profile is longer than 20,000 characters" in r.json()["detail"]


@pytest.mark.parametrize(("note", "problem"), [
    ("", "at least 1 character"),
    ("   \n\t ", "the note is empty"),
    ("x" * (MAX_NOTE_CHARS + 1), f"at most {MAX_NOTE_CHARS} characters"),
])
def test_empty_or_oversized_notes_are_a_clear_422(alice: TestClient, model: ScriptedModel, db: Database,
                                                  note: str, problem: str) -> None:
    r = alice.post("/api/patients", json={"note": note})
    assert r.status_code == 422
    body = r.json()
    assert body["error"] == "invalid_input" and problem in body["detail"], body
    assert body["errors"][0]["loc"] == ["body", "note"]
    assert counts(db)["patients"] == 0
    pid = create_patient(alice)["id"]
    r = alice.patch(f"/api/patients/{pid}", json={"note": note})
    assert r.status_code == 422 and problem in r.json()["detail"]
    assert alice.get(f"/api/patients/{pid}").json()["note"] == NOTE  # nothing lost


def test_the_limit_is_in_the_openapi(app: Any) -> None:
    note = app.openapi()["components"]["schemas"]["PatientCreate"]["properties"]["note"]
    assert note["maxLength"] == MAX_NOTE_CHARS and note["minLength"] == 1
    assert f"{MAX_NOTE_CHARS:,} characters" in note["description"]


def test_the_note_is_in_no_log_and_no_error_body(alice: TestClient, model: ScriptedModel,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, logger="backend")
    bodies = [alice.post("/api/patients", json={"note": NOTE + " " + "y" * MAX_NOTE_CHARS}).text,
              alice.post("/api/patients", json={"note": NOTE, "label": "x" * 500}).text,
              alice.post("/api/patients", json={"note": NOTE, "unexpected": 1}).text]
    pid = create_patient(alice)["id"]
    model.judge = Script.http_error(500, "api_error", "upstream trouble")  # every judgement fails
    _, events = screen(alice, pid, nct_ids=TRIALS[:2])
    assert "trial_error" in kinds(events)
    stored = alice.get(f"/api/screenings/{events[0].data['screening_id']}").json()
    bodies.append(repr([stored["problems"], stored["error"]]))  # (its sentences are the note: the owner's)
    bodies += [alice.patch(f"/api/patients/{pid}", json={"note": NOTE, "profile": {"age": -3}}).text,
               alice.get(f"/api/patients/{pid + 1000}").text]
    for text in [*bodies, *(repr(e.data) for e in events if e.event != "profile"), caplog.text]:
        for marker in NOTE_MARKERS:
            assert marker not in text
    assert all(r.getMessage() for r in caplog.records)  # (the capture saw the requests' logging)


def test_another_users_patient_is_404_everywhere(alice: TestClient, bob: TestClient, model: ScriptedModel,
                                                 db: Database) -> None:
    pid = create_patient(alice)["id"]
    _, events = screen(alice, pid, nct_ids=TRIALS[:1])
    sid = events[0].data["screening_id"]
    report = alice.post(f"/api/screenings/{sid}/reports", json={})
    assert report.status_code == 201, report.text
    rid = report.json()["id"]
    before = counts(db)
    attempts = [bob.post(f"/api/screenings/{sid}/reports", json={}), bob.get(f"/api/screenings/{sid}/reports"),
                bob.get(f"/api/screening-reports/{rid}/html"), bob.get(f"/api/screening-reports/{rid}/pdf"),
                bob.get(f"/api/screening-reports/{rid}/pdf?download=true"),
                bob.delete(f"/api/screening-reports/{rid}"),
                bob.get(f"/api/patients/{pid}"), bob.patch(f"/api/patients/{pid}", json={"label": "mine"}),
                bob.patch(f"/api/patients/{pid}", json={"note": "Another note."}),
                bob.delete(f"/api/patients/{pid}"), bob.get(f"/api/patients/{pid}/screenings"),
                bob.post(f"/api/patients/{pid}/screenings", json={"nct_ids": TRIALS[:1]}),
                bob.get(f"/api/screenings/{sid}"), bob.get(f"/api/screenings/{sid}/stream"),
                bob.post(f"/api/screenings/{sid}/stop"), bob.delete(f"/api/screenings/{sid}")]
    for r in attempts:
        assert r.status_code == 404, (r.request.method, r.request.url, r.text)
        assert r.json()["error"] == "not_found"
    assert bob.get("/api/patients").json() == []
    assert counts(db) == before
    assert alice.get(f"/api/screenings/{sid}").json()["status"] == "complete"
    assert alice.get(f"/api/screening-reports/{rid}/pdf").status_code == 200


def test_deleting_a_patient_deletes_everything_derived(alice: TestClient, bob: TestClient, model: ScriptedModel,
                                                      db: Database) -> None:
    mine, theirs = create_patient(alice), create_patient(bob)
    alice.patch(f"/api/patients/{mine['id']}", json={"profile": {**mine["profile"], "age": 61}})
    for client, pid in ((alice, mine["id"]), (bob, theirs["id"])):
        _, events = screen(client, pid, nct_ids=TRIALS)
        assert kinds(events)[-1] == "complete"
    _, events = screen(alice, mine["id"], nct_ids=TRIALS[:1])  # a second screening (judgements cached)
    assert kinds(events)[-1] == "complete"
    for client, pid in ((alice, mine["id"]), (alice, mine["id"]), (bob, theirs["id"])):  # reports of each
        sid = client.get(f"/api/patients/{pid}/screenings").json()[0]["id"]
        assert client.post(f"/api/screenings/{sid}/reports", json={}).status_code == 201
    both = counts(db)
    assert both["screening_reports"] == 3
    assert both["patients"] == 2 and both["screenings"] == 3 and both["screening_trials"] == 7
    assert both["screening_criteria"] > 0 and both["screening_judgements"] > 0

    assert alice.delete(f"/api/patients/{mine['id']}").status_code == 204
    left = counts(db)
    assert alice.get(f"/api/patients/{mine['id']}").status_code == 404
    assert alice.get("/api/patients").json() == []
    # exactly Bob's rows remain: one patient, one version, one screening of three trials
    assert left["patients"] == 1 and left["patient_versions"] == 1 and left["screenings"] == 1
    assert left["screening_trials"] == 3 and left["screening_reports"] == 1
    assert 0 < left["screening_criteria"] < both["screening_criteria"]
    assert 0 < left["screening_judgements"] < both["screening_judgements"]
    assert bob.get(f"/api/patients/{theirs['id']}").status_code == 200

    assert bob.delete(f"/api/patients/{theirs['id']}").status_code == 204
    assert set(counts(db).values()) == {0}
