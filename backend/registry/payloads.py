"""PayloadType: structured data a card renders, from a tool (`ToolResult.payload`) or the model (a marker).

A payload is declared once, as a pydantic model decorated with `@payload_type(...)` (the store). Everything else is
read from that model: the JSON schema a marker's JSON is validated against (`schema`), the shape the
model's instructions show (`llm_instructions`), the check of a tool's payload (building the model), and
the frontend's types (the models are components of the OpenAPI document, `payload_components`).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue, SkipJsonSchema
from pydantic_core import core_schema

# An optional field the model may leave out but never set to null: `explanation: str | Omitted = None`.
Omitted = SkipJsonSchema[None]

@dataclass(frozen=True)
class PayloadType:
    name: str
    description: str
    source: Literal["tool", "llm"]
    model: type[BaseModel]
    is_global: bool = False
    # LLM payloads: the model writes `<parse_marker> {json}`; `when` says when to (the instructions' first
    # line), `notes` adds rules and examples after the shape, which comes from the model's fields.
    parse_marker: str | None = None
    when: str | None = None
    notes: str | None = None
    # The user accepts or dismisses it (a suggestion), rather than only reading it.
    suggestion: bool = False

    @property
    def schema(self) -> dict[str, Any]:
        return json_schema(self.model)

    @property
    def llm_instructions(self) -> str | None:
        if self.parse_marker is None or self.when is None:
            return None
        text = f"{self.parse_marker[:-1]} - {self.when}\n\n{self.parse_marker} {shape(self.model)}"
        return f"{text}\n\n{self.notes}" if self.notes else text


class PayloadSchema(GenerateJsonSchema):
    """Pydantic's JSON schema without `"default": null`: an `Omitted` field's schema does not allow null,
    and OpenAPI requires a default to be valid against its schema."""

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        json_schema = super().default_schema(schema)
        if json_schema.get("default", ...) is None:
            del json_schema["default"]
        return json_schema


@functools.cache
def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """Built once per model (shared, never mutated)."""
    return model.model_json_schema(schema_generator=PayloadSchema)


def _placeholder(info: FieldInfo) -> Any:
    """What a field looks like in the instructions' shape: its first example, its description, or its
    allowed values."""
    if info.examples:
        return info.examples[0]
    if info.description:
        return info.description
    annotation = info.annotation
    args = [a for a in get_args(annotation) if a is not type(None)] if get_origin(annotation) is not Literal \
        else [annotation]
    for arg in args or [annotation]:
        if get_origin(arg) is Literal:
            return "|".join(str(v) for v in get_args(arg))
        if get_origin(arg) is list:
            return ["..."]
    return "..."


def shape(model: type[BaseModel]) -> str:
    """The model's fields as one line of JSON, the way the instructions show a card."""
    return json.dumps({name: _placeholder(info) for name, info in model.model_fields.items()}, ensure_ascii=False)


# Model → payload type name, so a tool's result names its type by the model it builds, never by a string.
PAYLOAD_NAMES: dict[type[BaseModel], str] = {}


def card_of(data: BaseModel) -> dict[str, Any]:
    """`{"type", "data"}` of a tool's payload: the type is the one its model was declared as."""
    name = next((PAYLOAD_NAMES[c] for c in type(data).__mro__ if c in PAYLOAD_NAMES), None)
    if name is None:
        raise TypeError(f"{type(data).__name__} is not a declared payload model")
    return {"type": name, "data": data.model_dump()}
