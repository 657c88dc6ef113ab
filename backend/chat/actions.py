"""Server actions: a suggested action with handler "server" that the user clicked comes back as an action.

The request names the action (and its data); the turn checks the conversation's last answer offered it and
tells the model, in the user message it stores, which of its offers was taken, with the offer's own label
and data. The chat shows the user's click as the action's label, never its machine name.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import jsonschema
from pydantic import BaseModel, Field, field_validator

from backend.agent.schemas import MessageExtras, SuggestedAction
from backend.chat.markers import ACTION_DATA_SCHEMA
from backend.errors import InvalidInput


class ActionRequest(BaseModel):
    action: str = Field(min_length=1, max_length=100)
    data: dict[str, Any] | None = Field(default=None, json_schema_extra={"maxProperties": 16})

    @field_validator("data")
    @classmethod
    def _flat(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            try:
                jsonschema.validate(value, ACTION_DATA_SCHEMA)
            except jsonschema.ValidationError as exc:
                raise ValueError(f"action data: {exc.message}") from None
        return value


def offered_action(rows: Sequence[Any], request: ActionRequest) -> SuggestedAction:
    """The server action of the conversation's last answer that `request` names (same name and data)."""
    answer = next((row for row in reversed(rows) if row.role == "assistant"), None)
    offers = MessageExtras.model_validate(answer.extras or {}).suggested_actions if answer is not None else []
    for offer in offers:  # no data and empty data are the same offer
        if offer.handler == "server" and offer.action == request.action and (offer.data or {}) == (request.data or {}):
            return offer
    raise InvalidInput(f"The action {request.action!r} was not offered by this conversation's last answer.")


def action_message(action: SuggestedAction) -> str:
    """What the model reads for the click (the stored user message keeps the label the user saw)."""
    data = f" with data {json.dumps(action.data, ensure_ascii=False)}" if action.data else ""
    return (f"[The user clicked your suggested action \"{action.label}\" (server action `{action.action}`"
            f"{data}). Carry it out now.]")
