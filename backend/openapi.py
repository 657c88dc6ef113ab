"""The API's OpenAPI document, the source of the frontend's wire types (`python -m backend schema`).

JSON routes describe themselves through their response models. The two SSE routes declare their event
union with `event_stream` (so every event model is in `components.schemas`), filed under
`text/event-stream`: each frame's `data` is one member of the union. The frontend commits the document
(`frontend/src/api/openapi.json`) and generates `schema.d.ts` from it (`make types` does both);
`tests/api/test_openapi.py` and `npm test` fail when either falls behind.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI

from backend.config import PROJECT_ROOT, Settings

COMMITTED = PROJECT_ROOT / "frontend" / "src" / "api" / "openapi.json"
EVENT_STREAM = "text/event-stream"


def event_stream(events: Any, description: str) -> dict[str, Any]:
    """A route's `responses={200: event_stream(Union, "…")}`: the body is Server-Sent Events whose `data`
    is one member of `events` (a union discriminated by `type`)."""
    return {"model": events, "description": description, "content": {EVENT_STREAM: {}}}


def describe_event_streams(app: FastAPI) -> None:
    """Make `app.openapi()` file an `event_stream` response's schema under `text/event-stream`. (FastAPI
    puts a response `model` under the route class's media type, which sse-starlette sets only per
    instance, so it lands under `application/json`.)"""
    build: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        document = build()
        for operations in document.get("paths", {}).values():
            for operation in operations.values():
                if not isinstance(operation, dict):
                    continue
                content = operation.get("responses", {}).get("200", {}).get("content", {})
                if content.get(EVENT_STREAM) == {} and "application/json" in content:
                    content[EVENT_STREAM] = content.pop("application/json")
        return document

    app.openapi = openapi  # type: ignore[method-assign]


def openapi_document() -> dict[str, Any]:
    """The app's OpenAPI document, built without side effects: an in-memory database that is never
    connected to, the demo model, offline sources, and no lifespan (so no seeding)."""
    from backend.main import create_app

    settings = Settings(database_url="sqlite://", anthropic_api_key=None, colleague_sources="offline",
                        colleague_demo=False)
    app = create_app(settings)
    try:
        return app.openapi()
    finally:
        app.state.db.dispose()


def render(document: dict[str, Any]) -> str:
    """Stable text: sorted keys, two-space indent, a final newline (so the committed file diffs cleanly)."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

