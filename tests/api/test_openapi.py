"""The OpenAPI document the frontend's types come from: complete (the SSE events too), valid, and committed.

No database: the document is built from the app's routes and models alone.
"""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import pytest
from openapi_spec_validator import validate

from backend.__main__ import main
from backend.agent.schemas import ChatEvent
from backend.ai_columns.schemas import ColumnEvent
from backend.config import get_settings
from backend.schema_export import COMMITTED, openapi_document, render
from backend.screening.schemas import ScreeningStreamEvent

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return openapi_document()


def members(union: Any) -> dict[str, str]:
    """`type` literal → model name, for every member of an event union."""
    if typing.get_origin(union) is typing.Annotated:
        union = typing.get_args(union)[0]
    return {model.model_fields["type"].default: model.__name__ for model in typing.get_args(union)}


@pytest.mark.parametrize(("path", "union"), [("/api/chat/stream", ChatEvent),
                                             ("/api/ai-columns/evaluate", ColumnEvent),
                                             ("/api/patients/{patient_id}/screenings", ScreeningStreamEvent)])
def test_sse_routes_describe_every_event_as_a_component(document: dict[str, Any], path: str, union: Any) -> None:
    content = document["paths"][path]["post"]["responses"]["200"]["content"]
    assert list(content) == ["text/event-stream"]
    schema = content["text/event-stream"]["schema"]
    expected = {t: f"#/components/schemas/{name}" for t, name in members(union).items()}
    assert schema["discriminator"] == {"propertyName": "type", "mapping": expected}
    assert sorted(ref["$ref"] for ref in schema["oneOf"]) == sorted(expected.values())
    for type_, ref in expected.items():
        component = document["components"]["schemas"][ref.rsplit("/", 1)[1]]
        assert component["properties"]["type"]["const"] == type_


def test_the_document_is_valid_openapi(document: dict[str, Any]) -> None:
    validate(document)


def test_no_two_models_share_a_name(document: dict[str, Any]) -> None:
    """FastAPI names two models of one name by their modules (`backend__streams__schemas__VersionRead`),
    which renames the frontend's types of both."""
    assert [name for name in document["components"]["schemas"] if name.startswith("backend__")] == []


def test_the_committed_document_is_the_apps(document: dict[str, Any]) -> None:
    committed = COMMITTED.read_text(encoding="utf-8") if COMMITTED.is_file() else ""
    assert committed == render(document), (
        f"{COMMITTED.relative_to(ROOT)} is stale: run `python -m backend schema`, then `cd frontend && npm run "
        "gen:types` (or `make types`), and commit both files")


def test_schema_command_writes_it_without_touching_a_database(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    db_dir = tmp_path / "not-created"  # creating the app's configured database would make this directory
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{db_dir / 'colleague.db'}")
    monkeypatch.setenv("COLLEAGUE_DEMO", "1")
    get_settings.cache_clear()
    try:
        out = tmp_path / "out" / "openapi.json"
        assert main(["schema", "--out", str(out)]) == 0
    finally:
        get_settings.cache_clear()
    assert out.read_bytes() == COMMITTED.read_bytes()
    assert not db_dir.exists()
