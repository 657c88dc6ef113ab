"""The typed record of a turn and the events that stream it: one module, the vocabulary of the wire.

    Card            a payload the user can Accept or Dismiss (from a tool result or the model's marker)
    ToolCall        one tool call of a turn, as the user and the next turn see it
    Usage           tokens of the turn's model calls (its cost)
    ContextUsage    how full the context window is: what the turn's last model call read
    TurnResult      the `complete` event's payload (ARCHITECTURE.md: ChatResponsePayload)
    MessageExtras   what an assistant message stores beside its text (PublicExtras: what the page sees)

Every streamed event is a member of `ChatEvent`, a union discriminated by its `type` literal; the agent
loop yields some, the chat service adds the rest, and only `chat/sse.py` turns them into frames. The
frontend's types are generated from these models (`python -m backend schema`), so the two cannot drift.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

TurnStatus = Literal["complete", "interrupted", "failed"]
Decision = Literal["accepted", "dismissed"]


class Record(BaseModel):
    """Stored and sent records: unknown keys of older rows are ignored, never an error."""

    model_config = ConfigDict(extra="ignore")


class Card(Record):
    id: str
    type: str
    data: Any
    source: Literal["tool", "llm"] = "llm"
    tool: str | None = None  # the tool whose result carried it (tool cards)
    decision: Decision | None = None
    decided_at: str | None = None


class ToolCall(Record):
    tool_name: str
    input: dict[str, Any]
    output: str
    is_error: bool = False
    # Where in the answer's visible text the call began (characters), so a stored answer shows each tool
    # step where it happened, as it streamed; None when unknown (a call refused before it started).
    at: int | None = None


class SuggestedValue(Record):
    label: str
    value: str


class SuggestedAction(Record):
    label: str
    action: str
    handler: Literal["client", "server"]
    data: dict[str, Any] | None = None


class Usage(Record):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    context_window: int | None = None


class ContextUsage(Record):
    """What the next turn will carry: the input of this turn's final model call (uncached + cache read +
    cache write), against the model's window. Unlike `Usage`, never a sum over calls."""

    input_tokens: int
    context_window: int
    model: str
    turns: int  # user turns in the conversation so far, this one included
    compaction: bool = True


class StreamRef(Record):
    """The research stream whose instructions shaped a turn."""

    id: int
    name: str
    version_id: int | None = None  # the saved instructions version; None for an admin's draft
    version_number: int | None = None  # that version's number within its stream (1, 2, 3…); None for a draft
    draft: bool = False
    applied: bool = False  # the stream has instructions that joined the prompt


class TurnError(Record):
    message: str
    code: str
    retryable: bool = False


class PublicExtras(Record):
    """An assistant message's structured part, as the page sees it (`GET /api/conversations/{id}`)."""

    turn_id: str | None = None
    payloads: list[Card] = Field(default_factory=list)
    suggested_values: list[SuggestedValue] = Field(default_factory=list)
    suggested_actions: list[SuggestedAction] = Field(default_factory=list)
    tool_history: list[ToolCall] = Field(default_factory=list)
    usage: Usage | None = None
    context_usage: ContextUsage | None = None
    model: str | None = None
    stop_reason: str | None = None
    payload_errors: list[str] = Field(default_factory=list)
    stream: StreamRef | None = None
    error: TurnError | None = None
    # User messages: the suggested server action this message clicked (its label is the message's text).
    action: SuggestedAction | None = None


class MessageExtras(PublicExtras):
    """What an assistant message stores beside its text: the public part, plus `blocks` (the exact API
    content of the turn, for rebuilding the history), which stays on the server."""

    blocks: list[dict[str, Any]] = Field(default_factory=list)
    # User messages: the exact content blocks they were sent with (page context included), for replay.
    sent_content: list[dict[str, Any]] = Field(default_factory=list)


class TurnResult(Record):
    message: str
    payloads: list[Card]
    suggested_values: list[SuggestedValue]
    suggested_actions: list[SuggestedAction]
    tool_history: list[ToolCall]
    conversation_id: int
    message_id: int
    status: TurnStatus
    usage: Usage


# ---- events -------------------------------------------------------------------------------------------


class WireEvent(BaseModel):
    """Base of every streamed event: frozen, named on the wire by its `type` literal."""

    model_config = ConfigDict(frozen=True)
    type: str
    _omitted_when_none: ClassVar[tuple[str, ...]] = ()  # optional keys that appear only with a value

    def to_data(self) -> dict[str, Any]:
        """The SSE `data` JSON: fields in declaration order, `type` last."""
        data = self.model_dump(mode="json", exclude={"type"})
        for key in self._omitted_when_none:
            if data.get(key) is None:
                del data[key]
        data["type"] = self.type
        return data


class StreamFailed(WireEvent):
    """The fatal `error` event of a stream other than a turn's (an AI column run, a report's build). Each
    stream names its own subclass, so the API document keeps one schema per stream (a subclass without
    a docstring of its own has no description there)."""

    message: str
    code: str
    retryable: bool
    type: Literal["error"] = "error"


class ConversationOpened(WireEvent):
    """Always first: which conversation, turn and user message this stream belongs to."""

    conversation_id: int
    turn_id: str
    user_message_id: int
    stream: StreamRef | None = None  # present only when a research stream shapes the turn
    type: Literal["conversation"] = "conversation"
    _omitted_when_none = ("stream",)


class Status(WireEvent):
    """A status line. `notice` marks news about the turn itself (e.g. "stream 7 is archived") that the
    page keeps on the answer, unlike progress lines that replace each other."""

    message: str
    notice: bool | None = None
    type: Literal["status"] = "status"
    _omitted_when_none = ("notice",)


class TextDelta(WireEvent):
    text: str
    type: Literal["text_delta"] = "text_delta"

    def to_data(self) -> dict[str, Any]:
        """The most frequent event, built directly (the same dict as the generic dump, at a third of it)."""
        return {"text": self.text, "type": "text_delta"}


class ToolStarted(WireEvent):
    tool: str
    input: dict[str, Any]
    index: int
    type: Literal["tool_start"] = "tool_start"


class ToolProgressed(WireEvent):
    tool: str
    index: int
    stage: str
    message: str
    progress: float | None
    type: Literal["tool_progress"] = "tool_progress"


class ToolCompleted(WireEvent):
    tool: str
    index: int
    is_error: bool
    payload: Card | None = None
    type: Literal["tool_complete"] = "tool_complete"


class UsageUpdated(WireEvent):
    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    context_window: int
    type: Literal["usage"] = "usage"


class ContextUpdated(WireEvent):
    """The context meter (spec: `context_update`): sent before the terminal event of a turn whose model
    answered. `usage` stays the turn's cost; this is how full the next request will be."""

    input_tokens: int
    context_window: int
    model: str
    turns: int
    compaction: bool
    type: Literal["context_update"] = "context_update"


class Resynced(WireEvent):
    """A turn whose worker died, next: the events after id `after` that a client may hold were never stored.
    Void them: the answer's text so far is `text` (what the events through `after` say). First from the
    worker that goes on with the turn (the model goes on from what was stored, so their text would come
    again), or right before the `error` of a turn ended `interrupted` instead (their text is in no answer)."""

    after: int
    text: str
    type: Literal["resync"] = "resync"


class TurnCompleted(WireEvent):
    payload: TurnResult
    type: Literal["complete"] = "complete"


class TurnErrored(WireEvent):
    """Last on failure. Codes: the API's error type, `connection_lost`, `truncated`, `timeout`, `stalled`,
    `interrupted`, `internal_error`."""

    message: str
    code: str
    retryable: bool
    conversation_id: int
    message_id: int | None
    type: Literal["error"] = "error"


class Reconnect(WireEvent):
    """Last when this server shuts down mid-turn: the answer goes on; resume it (`GET
    /api/conversations/{id}/stream` with `Last-Event-ID`) after `retry_ms`. Carries no id of its own."""

    message: str
    retry_ms: int
    type: Literal["reconnect"] = "reconnect"


AgentEvent = Status | TextDelta | ToolStarted | ToolProgressed | ToolCompleted | UsageUpdated
ChatEvent = Annotated[
    ConversationOpened | Status | TextDelta | ToolStarted | ToolProgressed | ToolCompleted | UsageUpdated
    | ContextUpdated | Resynced | TurnCompleted | TurnErrored | Reconnect,
    Field(discriminator="type"),
]
chat_event_adapter: TypeAdapter[Any] = TypeAdapter(ChatEvent)
