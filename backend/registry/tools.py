"""ToolConfig and what executors return.

A tool declares its input as a pydantic model: the JSON schema the model sees is
`input_model.model_json_schema()`, and the agent loop validates each call against the same model once,
so a tool never declares its input twice. An executor is `async executor(params, ctx)` returning a
`ToolResult` (or a plain string), or an async generator that yields `ToolProgress` items and, last, its
`ToolResult`. Executors report model-facing problems by raising; the loop turns any exception into an
`is_error` tool result, so a tool can never end a turn.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:
    from backend.sources import Sources


@dataclass(frozen=True)
class ToolResult:
    text: str
    # Full data for the UI (`text` is what the model reads): {"type": <payload type name>, "data": {...}},
    # built from a declared payload model by `card_of`.
    payload: dict[str, Any] | None = None
    is_error: bool = False


@dataclass(frozen=True)
class ToolProgress:
    stage: str
    message: str
    progress: float | None = None


@dataclass
class ToolContext:
    """What a tool may know about the turn it runs in: never the HTTP request or a DB session."""

    sources: Sources | None = None  # PubMed and ClinicalTrials.gov (live or offline)
    user_id: int | None = None
    conversation_id: int | None = None
    page_context: Mapping[str, Any] = field(default_factory=dict)
    # The holding pen: items the page sent that were kept out of the prompt, by kind ("trials", ...).
    staged: Mapping[str, list[dict[str, Any]]] = field(default_factory=dict)
    # The user's stored patients and screenings (a `backend.screening.desk.ScreeningDesk`: owner-scoped reads,
    # reports), for the screening tools; typed loosely so the registry knows nothing of screening.
    screenings: object | None = None

    def require_sources(self) -> Sources:
        if self.sources is None:
            raise RuntimeError("this tool needs the data sources, and the turn was started without them")
        return self.sources


Executor = Callable[[Any, ToolContext], Awaitable[ToolResult | str] | AsyncIterator[ToolProgress | ToolResult]]


@dataclass(frozen=True)
class ToolConfig:
    name: str
    description: str
    input_model: type[BaseModel]
    executor: Executor
    is_global: bool = True
    payload_type: str | None = None  # the payload type its results carry (checked at startup)

    def to_anthropic(self) -> dict[str, Any]:
        """The tool as the Messages API takes it. Its schema is built once per input model (shared, never
        mutated), not on every turn: generating it was 8% of the event loop's time beside 100 streams."""
        return {"name": self.name, "description": self.description, "input_schema": _schema(self.input_model)}


@functools.cache
def _schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema()
