"""Declarations read from code: a tool from its function, a payload type from its model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Literal

import jsonschema
import pytest
from pydantic import BaseModel, Field

from backend.openapi import payload_components
from backend.registry import REGISTRY, Omitted, RegistryError, ToolContext, card_of, payload_type, swapped, tool
from backend.registry.builtins import load_builtins


class Query(BaseModel):  # module level: a tool's annotations are resolved in its module
    q: str


@pytest.fixture
def open_registry() -> Iterator[None]:
    """The built-ins, unfrozen for the test's own declarations, restored afterwards."""
    load_builtins()
    with swapped(validate=False):
        REGISTRY.frozen = False
        yield


def test_a_tool_is_read_from_its_function(open_registry: None) -> None:
    @payload_type("found_things", "what lookup found")
    class Found(BaseModel):
        items: list[int]

    @tool(is_global=False, payload=Found)
    async def lookup_things(params: Query, ctx: ToolContext) -> str:
        """Look things up.
        Returns at most ten."""
        return params.q

    declared = REGISTRY.tools["lookup_things"]
    assert declared.description == "Look things up. Returns at most ten."
    assert declared.input_model is Query and declared.executor is lookup_things
    assert declared.payload_type == "found_things" and not declared.is_global
    assert declared.to_anthropic()["input_schema"]["required"] == ["q"]
    REGISTRY.validate()


def test_a_tool_without_a_docstring_or_with_an_undeclared_payload_is_refused(open_registry: None) -> None:
    async def undocumented(params: Query, ctx: ToolContext) -> str:
        return ""

    with pytest.raises(RegistryError, match="no docstring"):
        tool()(undocumented)

    async def carries(params: Query, ctx: ToolContext) -> str:
        """Carries a payload nobody declared."""
        return ""

    with pytest.raises(RegistryError, match="not a declared payload"):
        tool(payload=Query)(carries)
    assert "undocumented" not in REGISTRY.tools and "carries" not in REGISTRY.tools


def test_a_payload_type_is_read_from_its_model(open_registry: None) -> None:
    @payload_type("test_note", "a note", marker="TEST_NOTE:", suggestion=True, when="when asked for a note:",
                  notes="Keep it short.")
    class Note(BaseModel):
        text: str = Field(max_length=50, description="the note")
        tone: Literal["dry", "warm"] | Omitted = None

    declared = REGISTRY.payloads["test_note"]
    assert declared.source == "llm" and declared.suggestion and declared.model is Note
    assert declared.llm_instructions == ('TEST_NOTE - when asked for a note:\n\n'
                                         'TEST_NOTE: {"text": "the note", "tone": "dry|warm"}\n\nKeep it short.')
    jsonschema.validate({"text": "hi", "tone": "dry"}, declared.schema)
    for bad in ({"text": "x" * 51}, {"text": "hi", "tone": None}, {"tone": "dry"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, declared.schema)
    assert card_of(Note(text="hi")) == {"type": "test_note", "data": {"text": "hi", "tone": None}}


def test_card_of_refuses_a_model_that_is_not_a_payload() -> None:
    class Stray(BaseModel):
        x: int

    with pytest.raises(TypeError, match="not a declared payload model"):
        card_of(Stray(x=1))


def test_every_card_instruction_shows_its_models_fields() -> None:
    load_builtins()
    for declared in REGISTRY.payloads.values():
        if declared.source != "llm":
            continue
        assert declared.llm_instructions is not None and declared.parse_marker is not None
        line = next(x for x in declared.llm_instructions.splitlines() if x.startswith(declared.parse_marker))
        shown = json.loads(line.removeprefix(declared.parse_marker))
        assert list(shown) == list(declared.model.model_fields), declared.name


def test_the_openapi_components_name_every_payload_type() -> None:
    load_builtins()
    components = payload_components(REGISTRY.payloads.values())
    mapping = components["AnyPayload"]["discriminator"]["mapping"]
    assert sorted(mapping) == sorted(REGISTRY.payloads) == sorted(components["PayloadTypeName"]["enum"])
    assert sorted(components["SuggestionTypeName"]["enum"]) == sorted(
        p.name for p in REGISTRY.payloads.values() if p.suggestion)
    for name, ref in mapping.items():
        member = components[ref.rsplit("/", 1)[1]]
        assert member["properties"]["type"]["const"] == name
        model = REGISTRY.payloads[name].model.__name__
        assert member["properties"]["data"]["$ref"] == f"#/components/schemas/{model}"
