"""Screening beside the chat, over HTTP with the demo model: a patient screened offline, TrialScout's page
context built from the stored screening as the frontend builds it, and the chat's events read whole."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.screening_api.conftest import (  # noqa: F401 - the fixtures, shared with the screening API's tests
    NOTE,
    TRIALS,
    create_patient,
    demo_alice,
    demo_app,
    demo_bob,
    model,
    screen,
)
from tests.sse import Event, parse_lines, text_of

# Loaded in the table beside the screened ones: two more recruiting, one completed (offline corpus rows).
EXTRA = {"NCT02615054": "RECRUITING", "NCT00462956": "COMPLETED"}


@dataclass
class Screened:
    patient: dict[str, Any]
    detail: dict[str, Any]

    @property
    def shortlist(self) -> list[dict[str, Any]]:
        return self.detail["trials"]


def context(done: Screened | None, *, loaded: list[dict[str, Any]] | None = None, open_nct: str | None = None,
            **screening: Any) -> dict[str, Any]:
    """TrialScout's context as the page sends it: never the note."""
    ctx: dict[str, Any] = {"current_page": "trialscout", "condition": "breast cancer",
                           "loaded_count": len(loaded or []), "total_matched": len(loaded or []),
                           "trials": loaded or []}
    if done is not None:
        p = done.patient
        ctx["screening"] = {
            "patient_id": p["id"], "label": p["label"], "version_id": p["version"]["id"], "profile": p["profile"],
            "screening_id": done.detail["id"], "status": done.detail["status"], "open_nct_id": open_nct,
            "shortlist": [{k: t[k] for k in ("nct_id", "title", "verdict", "score", "met", "not_met", "unknown")}
                          for t in done.shortlist], **screening}
    return ctx


@dataclass
class Turn:
    events: list[Event]

    @property
    def text(self) -> str:
        return text_of(self.events)

    @property
    def complete(self) -> dict[str, Any]:
        return next(e.data["payload"] for e in self.events if e.event == "complete")

    @property
    def tools(self) -> list[str]:
        return [e.data["tool"] for e in self.events if e.event == "tool_start"]

    @property
    def cards(self) -> list[dict[str, Any]]:
        return self.complete["payloads"]


def ask(client: TestClient, message: str, ctx: dict[str, Any], conversation_id: int | None = None) -> Turn:
    body: dict[str, Any] = {"message": message, "context": ctx}
    if conversation_id is not None:
        body["conversation_id"] = conversation_id
    with client.stream("POST", "/api/chat/stream", json=body) as r:
        assert r.status_code == 200, r.read()
        return Turn(list(parse_lines(r.iter_lines())))


def screened(client: TestClient, nct_ids: list[str] | None = None, note: str = NOTE) -> Screened:
    patient = create_patient(client, note)
    _, events = screen(client, patient["id"], nct_ids=nct_ids or TRIALS)
    sid = events[0].data["screening_id"]
    detail = client.get(f"/api/screenings/{sid}").json()
    return Screened(client.get(f"/api/patients/{patient['id']}").json(), detail)


@pytest.fixture
def alice_screened(demo_alice: TestClient) -> Screened:  # noqa: F811 - the imported fixture
    return screened(demo_alice)
