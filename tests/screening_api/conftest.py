"""Screening over HTTP: a patient note, trials of the offline corpus, the scripted Messages API that answers
the engine's prompts (its profile JSON and per-criterion JSON), and row counts of the screening tables."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import sqlalchemy as sa
from starlette.testclient import TestClient

from backend.db.session import Database
from backend.demo.wire import Reply
from backend.main import create_app
from tests.conftest import make_settings, signed_in_fixture
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.sse import Event, parse_lines

# Numbered as in the TrialGPT notes. "Tromsø" and the dates appear nowhere else: a log or an error body
# that holds them holds the note.
NOTE = ("0. A 62-year-old woman presents with HER2-positive metastatic breast cancer, lives in Tromsø. "
        "1. She progressed on trastuzumab and pertuzumab in March 2026. "
        "2. No history of congestive heart failure. "
        "3. ECOG performance status 1. "
        "4. She is not pregnant.")
NOTE_MARKERS = ("Tromsø", "March 2026", "pertuzumab")
# Trials of the offline corpus with eligibility text; NCT02615054 has none; NCT09999999 exists nowhere.
TRIALS = ["NCT00372424", "NCT00371254", "NCT00462956"]
NO_CRITERIA = "NCT02615054"
VANISHED = "NCT09999999"
SCREENING_TABLES = ("patients", "patient_versions", "screenings", "screening_events", "screening_trials",
                    "screening_criteria", "screening_judgements", "screening_reports")
PROFILE_JSON = {"age": 62, "sex": "female", "conditions": ["HER2-positive breast cancer"],
                "key_facts": {"stage": "metastatic", "biomarkers": ["HER2-positive"],
                              "prior_therapies": ["trastuzumab", "pertuzumab"], "current_therapies": [],
                              "comorbidities": [], "performance_status": "ECOG 1", "labs": [], "location": None},
                "keywords": ["HER2-positive metastatic breast cancer"],
                "summary": "62-year-old woman with HER2-positive metastatic breast cancer"}


def create_patient(client: TestClient, note: str = NOTE, **fields: Any) -> dict[str, Any]:
    r = client.post("/api/patients", json={"note": note, **fields})
    assert r.status_code == 201, r.text
    return r.json()  # type: ignore[no-any-return]


def screen(client: TestClient, patient_id: int, **body: Any) -> tuple[Any, list[Event]]:
    """Start a screening and read its stream to the end: (the response, its events)."""
    with client.stream("POST", f"/api/patients/{patient_id}/screenings", json=body) as r:
        assert r.status_code == 200, r.read()
        return r, list(parse_lines(r.iter_lines()))


def kinds(events: list[Event]) -> list[str]:
    return [e.event for e in events]


def counts(db: Database) -> dict[str, int]:
    """Rows per screening table."""
    out = {}
    with db.session() as s:
        for table in SCREENING_TABLES:
            out[table] = int(s.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one())
    return out


def user_id(db: Database, username: str) -> int:
    with db.session() as s:
        return int(s.execute(sa.text("SELECT id FROM users WHERE username = :u"), {"u": username}).scalar_one())


# ---- the scripted model -----------------------------------------------------------------------------

def _text(body: dict[str, Any]) -> str:
    return json.dumps(body, ensure_ascii=False)


def criterion_ids(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(id, kind) of each criterion a judge request asks about, in order."""
    return re.findall(r"\[((?:inc|exc)-\d+)\] \((inclusion|exclusion)\)", _text(body))


class ScriptedModel:
    """Answers the engine's requests as a model would: the profile JSON for INGEST, and for a trial's
    criteria one entry per criterion id (`answer(kind)` decides: inclusion "yes", exclusion "no" by
    default: eligible). `judge` replaces the whole reply of a judge request (a stall, an error)."""

    def __init__(self, fake: FakeAnthropic) -> None:
        self.fake = fake
        self.answers = {"inclusion": "yes", "exclusion": "no"}
        self.judge: Script | None = None
        self.judged: list[list[tuple[str, str]]] = []
        self.tokens = (300, 40)  # input, output of each judge reply
        fake.default = self  # type: ignore[assignment]

    def __call__(self, body: dict[str, Any]) -> Script:
        text = _text(body)
        if "screening-ingest" in text:
            return Script.text(json.dumps(PROFILE_JSON))
        ids = criterion_ids(body)
        if ids:
            self.judged.append(ids)
            if self.judge is not None:
                return self.judge
            reply = Reply.text(json.dumps({"criteria": [
                {"id": cid, "answer": self.answers[kind], "reasoning": f"Scripted for {cid}.", "evidence": [0]}
                for cid, kind in ids]}))
            reply.input_tokens, reply.output_tokens = self.tokens
            return Script.answer(reply)
        return Script.text("No more searches.")  # a prescreen turn: end the search


@pytest.fixture
def model(fake_llm: FakeAnthropic) -> ScriptedModel:
    return ScriptedModel(fake_llm)


@pytest.fixture
def demo_app(db_url: str) -> Any:
    """The app without a key: the demo model screens offline."""
    return create_app(make_settings(db_url))


demo_alice = signed_in_fixture("alice", app="demo_app")
demo_bob = signed_in_fixture("bob", app="demo_app")
