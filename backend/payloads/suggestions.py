"""What the model may write after `SUGGESTED_VALUES:` and `SUGGESTED_ACTIONS:` (chat/markers.py validates
each marker's JSON against these schemas): the stored records' models, with the limits a model's offer keeps."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, TypeAdapter

from backend.agent.schemas import SuggestedAction, SuggestedValue
from backend.registry import Omitted

# Flat: what a client handler needs is a few ids or names.
ActionData = Annotated[dict[Annotated[str, Field(max_length=64)], Annotated[str, Field(max_length=1000)] | float
                            | bool | None], Field(max_length=16)]


class OfferedValue(SuggestedValue):
    """A `SUGGESTED_VALUES` item as the model may write it."""

    label: str = Field(min_length=1, max_length=80)
    value: str = Field(min_length=1, max_length=2000)


class OfferedAction(SuggestedAction):
    """A `SUGGESTED_ACTIONS` item as the model may write it."""

    label: str = Field(min_length=1, max_length=80)
    action: str = Field(min_length=1, max_length=100)
    data: ActionData | Omitted = None


ACTION_DATA_SCHEMA: dict[str, Any] = TypeAdapter(ActionData).json_schema()
VALUES_SCHEMA: dict[str, Any] = TypeAdapter(Annotated[list[OfferedValue], Field(max_length=8)]).json_schema()
ACTIONS_SCHEMA: dict[str, Any] = TypeAdapter(Annotated[list[OfferedAction], Field(max_length=6)]).json_schema()
