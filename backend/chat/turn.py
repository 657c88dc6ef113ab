"""A turn, as a worker holds it: what it runs with (`Turn`), where it is (`TurnStatus`), what another
worker needs to go on with it (`ResumeState`) and how it ends for its readers (`terminal_event`).

A turn's status, on its `chat_turns` row (its assistant message has the same values but `suspended`):

    begin ──▶ running ──── final save ────────────────────────────▶ complete | failed | interrupted
                │  ▲                                                        ▲
      shutdown  │  │ a live worker takes it over                             │ its worker is gone: the sweep,
      between   ▼  │ (`takeover.take_over`, at most MAX_CONTINUATIONS times)  │ Stop, or the next turn's claim
      tool calls suspended ───────────────────────────────────────────────────┘ (`turns.interrupt_stale`)

`running` and `suspended` are live (`LIVE`): a reader waits for more events, and a live worker may go on
with the turn. The other three are its end; the terminal event (`complete` or `error`) says which.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from backend.agent.schemas import (
    Card,
    MessageExtras,
    StreamRef,
    ToolCall,
    TurnCompleted,
    TurnError,
    TurnErrored,
    TurnResult,
    Usage,
)
from backend.agent.schemas import TurnStatus as EndStatus  # the wire's: a `complete` event's status
from backend.agent.state import TurnState
from backend.chat.prompt import PreparedPrompt, SystemPrompt
from backend.conversations.schemas import ConversationConfig
from backend.registry import Resolved, ToolContext
from backend.sources import Sources

TurnStatus = Literal["running", "suspended", "complete", "interrupted", "failed"]
LIVE: tuple[TurnStatus, ...] = ("running", "suspended")
__all__ = ["LIVE", "EndStatus", "ResumeState", "Turn", "TurnStatus", "terminal_event"]

INTERRUPTED = TurnError(message="The answer was interrupted (the server stopped while answering); what was "
                                "written so far is kept. Ask again to continue.", code="interrupted",
                        retryable=True)


@dataclass
class Turn:
    """Everything a turn needs to run, prepared in one short transaction (`begin`, or a take-over)."""

    user_id: int
    conversation_id: int
    app: str
    turn_id: str
    user_message_id: int
    assistant_message_id: int
    messages: list[dict[str, Any]]
    system: SystemPrompt
    resolved: Resolved
    tool_ctx: ToolContext
    config: ConversationConfig  # the conversation's model settings, read when the turn began
    turns: int  # user turns in the conversation, this one included
    notices: list[str] = field(default_factory=list)
    stream: StreamRef | None = None

    @classmethod
    def make(cls, *, turn_id: str, user_id: int, conversation_id: int, app: str, user_message_id: int,
             assistant_message_id: int, messages: list[dict[str, Any]], prompt: PreparedPrompt,
             context: dict[str, Any], config: ConversationConfig, turns: int, sources: Sources | None) -> Turn:
        """The one way a `Turn` is made: a new one (`begin`) or one a worker takes over."""
        return cls(
            user_id=user_id, conversation_id=conversation_id, app=app, turn_id=turn_id,
            user_message_id=user_message_id, assistant_message_id=assistant_message_id, messages=messages,
            system=prompt.system, resolved=prompt.resolved, config=config, turns=turns,
            tool_ctx=ToolContext(sources=sources, user_id=user_id, conversation_id=conversation_id,
                                 page_context=context, staged=prompt.staged),
            notices=prompt.notices, stream=prompt.stream)


@dataclass(frozen=True)
class ResumeState:
    """What a worker needs to go on with a turn (`chat_turns.resume_state`): its `TurnState` as of the
    last whole checkpoint, and `through`, the last event that checkpoint covered (the text streamed
    after it is in the turn's events only)."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    text: str = ""
    partial_text: str = ""
    tool_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    tool_history: list[ToolCall] = field(default_factory=list)
    tool_payloads: list[Card] = field(default_factory=list)
    through: int | None = None

    @classmethod
    def of(cls, state: TurnState, through: int | None = None) -> ResumeState:
        return cls(messages=list(state.messages), text=state.text, partial_text=state.partial_text,
                   tool_calls=state.tool_calls, usage=state.usage.model_copy(),
                   tool_history=list(state.tool_history),
                   tool_payloads=list(state.tool_payloads), through=through)

    @classmethod
    def load(cls, raw: Mapping[str, Any] | None) -> ResumeState | None:
        if raw is None:
            return None
        return cls(messages=raw.get("messages", []), text=raw.get("text", ""),
                   partial_text=raw.get("partial_text", ""), tool_calls=raw.get("tool_calls", 0),
                   usage=Usage.model_validate(raw.get("usage", {})),
                   tool_history=[ToolCall.model_validate(t) for t in raw.get("tool_history", [])],
                   tool_payloads=[Card.model_validate(c) for c in raw.get("tool_payloads", [])],
                   through=raw.get("through"))

    def dump(self) -> dict[str, Any]:
        raw = {"messages": self.messages, "text": self.text, "partial_text": self.partial_text,
               "tool_calls": self.tool_calls, "usage": self.usage.model_dump(mode="json"),
               "tool_history": [t.model_dump(mode="json") for t in self.tool_history],
               "tool_payloads": [c.model_dump(mode="json") for c in self.tool_payloads]}
        if self.through is not None:
            raw["through"] = self.through
        return raw

    def state(self) -> TurnState:
        return TurnState(messages=self.messages, text=self.text, partial_text=self.partial_text,
                         tool_calls=self.tool_calls, tool_history=self.tool_history,
                         tool_payloads=self.tool_payloads, usage=self.usage)

    def caught_up(self, tail: str) -> ResumeState:
        """With the text its readers were sent after `through` (between two whole checkpoints nothing but
        the streaming text changes). The tail is the text as shown: a marker in it is not in it."""
        return replace(self, partial_text=self.partial_text + tail)

    @property
    def continuable(self) -> bool:
        """Whether a turn can go on from here: before its first answer, mid-text, or with its tool calls
        all answered. Not mid-tool (a tool's effects can't be replayed safely) nor after its last model
        call ended (there is nothing to continue)."""
        return not self.messages or self.messages[-1]["role"] == "user"


def terminal_event(conversation_id: int, message_id: int | None, status: EndStatus,
                   failed: TurnError | None, content: str = "",
                   extras: MessageExtras | None = None) -> TurnCompleted | TurnErrored:
    """A turn's last event: `error` when it `failed` (the error its answer stores), else `complete` with
    the answer (its text and extras) as stored."""
    if failed is not None:
        return TurnErrored(message=failed.message, code=failed.code, retryable=failed.retryable,
                           conversation_id=conversation_id, message_id=message_id)
    extras = extras or MessageExtras()
    return TurnCompleted(payload=TurnResult(
        message=content, payloads=extras.payloads, suggested_values=extras.suggested_values,
        suggested_actions=extras.suggested_actions, tool_history=extras.tool_history,
        conversation_id=conversation_id, message_id=message_id or 0, status=status,
        usage=extras.usage or Usage()))
