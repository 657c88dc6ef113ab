"""The wire models of saved views. A view's `state` is the page's own JSON, kept as sent (bounded)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, StringConstraints, field_validator

from backend.ai_columns.schemas import App

MAX_STATE_CHARS = 128_000  # a page's search, its columns and filters, charts and a selection of 500 ids
MAX_NAMED_VIEWS = 50  # per user and page

ViewName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120)]

__all__ = ["App", "CurrentView", "SavedViewRead", "ViewCreate", "ViewState", "ViewUpdate"]


def _bounded(state: dict[str, Any]) -> dict[str, Any]:
    if len(json.dumps(state, separators=(",", ":"))) > MAX_STATE_CHARS:
        raise ValueError(f"A view's state is at most {MAX_STATE_CHARS:,} characters of JSON.")
    return state


class ViewState(BaseModel):
    """The page's working state, written as it changes."""

    model_config = ConfigDict(extra="forbid")

    state: dict[str, Any]

    _bound = field_validator("state")(_bounded)


class ViewCreate(ViewState):
    """Save the given state as a named view (a name the user has not used on this page)."""

    name: ViewName


class ViewUpdate(BaseModel):
    """Rename a named view, or save a new state into it (either or both)."""

    model_config = ConfigDict(extra="forbid")

    name: ViewName | None = None
    state: dict[str, Any] | None = None

    @field_validator("state")
    @classmethod
    def _state_bounded(cls, state: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if state is None else _bounded(state)


class CurrentView(BaseModel):
    """The page's working state; `state` is null until the page first saved one."""

    model_config = ConfigDict(extra="forbid")

    app: App
    state: dict[str, Any] | None
    updated_at: datetime | None


class SavedViewRead(BaseModel):
    model_config = ConfigDict(extra="forbid", from_attributes=True)

    id: int
    app: App
    name: str
    state: dict[str, Any]
    created_at: datetime
    updated_at: datetime
