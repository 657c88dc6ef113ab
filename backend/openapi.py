"""The API's OpenAPI document, the source of the frontend's wire types (`python -m backend schema`).

JSON routes describe themselves through their response models. The two SSE routes declare their event
union with `event_stream` (so every event model is in `components.schemas`), filed under
`text/event-stream`: each frame's `data` is one member of the union. The frontend commits the document
(`frontend/src/api/openapi.json`) and generates `schema.d.ts` from it (`make types` does both);
`tests/api/test_openapi.py` and `npm test` fail when either falls behind.
"""

from __future__ import annotations

from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI

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
                if "requestBody" in operation:  # backend/body_limits.py, and a body that is not JSON
                    for status in ("400", "413"):
                        operation["responses"].setdefault(status, {
                            "description": HTTPStatus(int(status)).phrase,
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}})
        return document

    app.openapi = openapi  # type: ignore[method-assign]
