"""ToolConfig and what executors return.

An executor is `executor(params, ctx)`, sync or async. It returns a `ToolResult` (or a plain string), or
streams: a generator / async generator that yields `ToolProgress` items and, last, its `ToolResult`.
Executors report model-facing problems by raising; the agent loop turns any exception into an
`is_error` tool result, so a tool can never end a turn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from backend.registry.store import REGISTRY


@dataclass(frozen=True)
class ToolResult:
    text: str
    # {"type": <payload type name>, "data": {...}}: full data for the UI; `text` is what the model reads.
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

    user_id: int | None = None
    conversation_id: int | None = None
    page_context: Mapping[str, Any] = field(default_factory=dict)
    # The holding pen: items the page sent that were kept out of the prompt, by kind ("trials", ...).
    staged: Mapping[str, list[dict[str, Any]]] = field(default_factory=dict)
    services: Mapping[str, Any] = field(default_factory=dict)


Executor = Callable[[dict[str, Any], ToolContext], Any]


@dataclass(frozen=True)
class ToolConfig:
    name: str
    description: str
    input_schema: dict[str, Any]
    executor: Executor
    is_global: bool = True
    category: str | None = None
    payload_type: str | None = None

    def to_anthropic(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}


def register_tool(tool: ToolConfig) -> ToolConfig:
    REGISTRY.add("tools", tool.name, tool)
    return tool
