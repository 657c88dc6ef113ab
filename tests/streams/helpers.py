"""Helpers shared by the streams tests: create streams through the API, snapshot what the database holds."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from backend.db.models import InstructionVersion, ResearchStream
from backend.db.session import Database


def make_stream(admin: TestClient, name: str = "EGFR resistance", instructions: str | None = "Name the mutation.",
                **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "chat_instructions": instructions, **extra}
    r = admin.post("/api/streams", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def snapshot(db: Database) -> dict[str, Any]:
    """Every stream and version row, to prove a refused request wrote nothing."""
    with db.session() as s:
        streams = [(st.id, st.name, st.description, st.chat_instructions, st.settings, st.archived, st.updated_by,
                    st.updated_at) for st in s.query(ResearchStream).order_by(ResearchStream.id)]
        versions = [(v.id, v.stream_id, v.chat_instructions, v.note, v.created_by)
                    for v in s.query(InstructionVersion).order_by(InstructionVersion.id)]
    return {"streams": streams, "versions": versions}
