"""Typed events of one agent turn (a discriminated union on `type`).

The agent loop yields these; the chat service adds `conversation`/`complete`/`error` around them and the
HTTP layer alone turns them into Server-Sent Events. `to_data()` is the SSE `data` JSON.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal


class Event:
    """Base of every streamed event: a frozen dataclass whose `type` literal names it on the wire."""

    type: str

    def to_data(self) -> dict[str, Any]:
        data = asdict(self)  # type: ignore[call-overload]
        data["type"] = self.type
        return data


@dataclass(frozen=True)
class Status(Event):
    """A status line. `notice` marks news about the turn itself (e.g. "stream 7 is archived") that the
    page keeps on the answer, unlike progress lines that replace each other."""

    message: str
    notice: bool = False
    type: Literal["status"] = "status"

    def to_data(self) -> dict[str, Any]:
        data = super().to_data()
        if not self.notice:
            del data["notice"]
        return data


@dataclass(frozen=True)
class TextDelta(Event):
    text: str
    type: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True)
class ToolStarted(Event):
    tool: str
    input: dict[str, Any]
    index: int
    type: Literal["tool_start"] = "tool_start"


@dataclass(frozen=True)
class ToolProgressed(Event):
    tool: str
    index: int
    stage: str
    message: str
    progress: float | None
    type: Literal["tool_progress"] = "tool_progress"


@dataclass(frozen=True)
class ToolCompleted(Event):
    tool: str
    index: int
    is_error: bool
    payload: dict[str, Any] | None = None
    type: Literal["tool_complete"] = "tool_complete"


@dataclass(frozen=True)
class UsageUpdated(Event):
    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    context_window: int
    type: Literal["usage"] = "usage"


@dataclass(frozen=True)
class TurnFailed(Event):
    """The model call failed; the loop has stopped. Codes: the API's error type, `connection_lost`,
    `truncated`, `timeout`."""

    message: str
    code: str
    retryable: bool
    type: Literal["error"] = "error"


AgentEvent = Status | TextDelta | ToolStarted | ToolProgressed | ToolCompleted | UsageUpdated | TurnFailed
