"""What a turn produced so far (`TurnState`, which the caller owns and reads after the loop ends or is
stopped) and the limits the loop runs it within (`LoopLimits`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backend.agent.errors import ApiFailure
from backend.agent.schemas import Card, ToolCall, Usage

INTERRUPTED_TOOL_TEXT = "The turn was interrupted before this tool finished; no result is available."


@dataclass
class LoopLimits:
    max_iterations: int = 15
    tool_budget: int = 12  # tool calls per turn before the model is told to stop and summarise
    max_tool_result_chars: int = 24_000
    heartbeat_seconds: float = 8.0
    max_tokens: int = 16_384  # per model call (the spec's); a conversation may set its own
    context_window: int = 200_000
    idle_timeout: float = 60.0  # seconds a model call may go without an upstream event (COLLEAGUE_MODEL_IDLE_TIMEOUT)
    model_retries: int = 2  # retries of a model call that failed retryably before any of it was shown
    retry_backoff: float = 1.0  # seconds before the first retry, doubled for each further one
    max_told_wait: float = 60.0  # a `retry-after` longer than this fails the call now instead of waiting


@dataclass
class TurnState:
    """What one turn produced so far. The caller reads it after the loop ends or is cancelled."""

    messages: list[dict[str, Any]] = field(default_factory=list)  # API messages added by this turn
    partial_text: str = ""  # text of the assistant message still streaming
    text: str = ""  # all assistant text of the turn, as the model wrote it (markers included)
    tool_history: list[ToolCall] = field(default_factory=list)
    tool_payloads: list[Card] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    last_input_tokens: int | None = None  # the last finished model call's whole input: the context's size
    stop_reason: str | None = None
    tool_calls: int = 0
    wrap_up: bool = False  # the next model call may not use tools: answer with what you have
    failure: ApiFailure | None = None  # why the loop ended early, when the model call failed
    invalid_inputs: dict[str, str] = field(default_factory=dict)  # tool_use id → why its input is unusable

    def history(self) -> list[dict[str, Any]]:
        """This turn's messages, repaired so the API accepts them as history whatever stopped the turn."""
        msgs = [dict(m) for m in self.messages]
        if self.partial_text.strip():
            msgs.append({"role": "assistant", "content": [{"type": "text", "text": self.partial_text}]})
        if msgs and msgs[-1]["role"] == "assistant":
            pending = [b["id"] for b in msgs[-1]["content"] if b.get("type") == "tool_use"]
            if pending:
                msgs.append({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": tid, "content": INTERRUPTED_TOOL_TEXT,
                     "is_error": True} for tid in pending]})
        if msgs and msgs[-1]["role"] == "user":
            msgs.append({"role": "assistant", "content": [{"type": "text", "text": "(turn interrupted)"}]})
        return msgs
