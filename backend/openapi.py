"""The API's OpenAPI document, the source of the frontend's wire types (`python -m backend schema`).

JSON routes describe themselves through their response models. The two SSE routes declare their event
union with `event_stream` (so every event model is in `components.schemas`), filed under
`text/event-stream`: each frame's `data` is one member of the union. The frontend commits the document
(`frontend/src/api/openapi.json`) and generates `schema.d.ts` from it (`make types` does both);
`tests/api/test_openapi.py` and `npm test` fail when either falls behind.

Payloads travel inside a `Card` (`data: Any`), so no route names their models; `describe_payloads` adds
them: `AnyPayload`, a union of `{type, data}` discriminated by the payload type's name, and the names of
all payload types (`PayloadTypeName`) and of those the user accepts or dismisses (`SuggestionTypeName`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from http import HTTPStatus
from typing import Annotated, Any, Literal, Union

from fastapi import FastAPI
from pydantic import BaseModel, Field, TypeAdapter, create_model

from backend.registry import PayloadType
from backend.registry.payloads import PayloadSchema

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


def payload_components(payload_types: Iterable[PayloadType]) -> dict[str, Any]:
    """The OpenAPI components that describe every payload type (see the module docstring)."""
    declared = sorted(payload_types, key=lambda p: p.name)  # not import order: the document must be stable
    # Built at runtime from the registry, so typed loosely: each member is `{type: Literal[name], data: model}`.
    members: Any = tuple(create_model(f"{p.model.__name__}Payload", __base__=BaseModel,
                                      type=(Literal[p.name], ...), data=(p.model, ...))  # type: ignore[arg-type]
                         for p in declared)
    union: Any = Annotated[Union[members], Field(discriminator="type")]  # noqa: UP007
    schema = TypeAdapter(union).json_schema(ref_template="#/components/schemas/{model}", mode="serialization",
                                            schema_generator=PayloadSchema)
    components: dict[str, Any] = schema.pop("$defs", {})
    components["AnyPayload"] = schema
    components["PayloadTypeName"] = {"type": "string", "enum": [p.name for p in declared]}
    components["SuggestionTypeName"] = {"type": "string", "enum": [p.name for p in declared if p.suggestion]}
    return components


def describe_payloads(app: FastAPI, payload_types: Iterable[PayloadType]) -> None:
    """Make `app.openapi()` carry `payload_components` (a model FastAPI generated already is kept)."""
    _add_components(app, payload_components(payload_types))


def describe_models(app: FastAPI, models: Iterable[type[BaseModel]]) -> None:
    """Make `app.openapi()` carry wire shapes no route names: what a page puts in the chat's free-form
    `context` (e.g. TrialScout's `context.screening`), so the frontend builds it from generated types."""
    components: dict[str, Any] = {}
    for model in models:
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}", mode="validation")
        components.update(schema.pop("$defs", {}))
        components[model.__name__] = schema
    _add_components(app, components)


def _add_components(app: FastAPI, components: dict[str, Any]) -> None:
    """Make `app.openapi()` carry `components` (a model FastAPI generated already is kept)."""
    build: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        document = build()
        schemas = document.setdefault("components", {}).setdefault("schemas", {})
        for name, value in components.items():
            schemas.setdefault(name, value)
        return document

    app.openapi = openapi  # type: ignore[method-assign]
