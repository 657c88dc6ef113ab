"""One turn's generation on this worker, apart from any connection that reads it.

The runner drives the agent loop, hides marker text, appends every event to the turn's `TurnLog`,
and checkpoints: every `CHECKPOINT_SECONDS` the new events go to `turn_events` and the assistant
message (which exists from the turn's start) gets the text so far, the finished tool pairs, the usage
so far and a history the Messages API accepts — so a `kill -9` loses at most a checkpoint of text. The
last save writes the answer, the turn's status, its remaining events and the terminal event in one
transaction, and releases the conversation's lease.

A turn can go on where another worker left it (issue 10, item 6): every checkpoint also stores the raw
`TurnState` (`chat_turns.resume_state`); a turn stopped by a shutdown between tool calls is saved
`suspended` instead of interrupted, and a live worker that takes it over (`ChatService.continue_turn`)
starts a runner `from_checkpoint`: the saved events are its log's first frames (ids go on from there),
and the model continues the saved partial answer as an assistant prefill.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
import weakref
from dataclasses import dataclass, field
from typing import Any

import anyio

from backend.agent.errors import ApiFailure
from backend.agent.llm import LLM
from backend.agent.loop import LoopLimits, TurnState, run_turn
from backend.agent.pump import Pump
from backend.agent.schemas import (
    AgentEvent,
    Card,
    ConversationOpened,
    MessageExtras,
    Status,
    StreamRef,
    SuggestedAction,
    SuggestedValue,
    TextDelta,
    ToolCall,
    TurnCompleted,
    TurnError,
    TurnErrored,
    TurnResult,
    TurnStatus,
    Usage,
    WireEvent,
)
from backend.chat import turns
from backend.chat.log import Frame, TurnLog, save_frames
from backend.chat.markers import SUGGESTED_ACTIONS, SUGGESTED_VALUES, MarkerFilter, extract
from backend.chat.prompt import SystemPrompt
from backend.chat.visible import visible_events
from backend.db.base import utcnow
from backend.db.models import ChatTurn, Conversation, Message
from backend.db.session import Database
from backend.quotas import record_usage
from backend.registry import Resolved, ToolContext

log = logging.getLogger(__name__)

CHECKPOINT_SECONDS = 0.5
PERSIST_THREADS = 4  # threads a worker's turns may write in at once (see `persist_limiter`)
_limiters: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, anyio.CapacityLimiter] = weakref.WeakKeyDictionary()
SHUTDOWN = ApiFailure(message="The server restarted while answering; what was written so far is kept. "
                              "Ask again to continue.", code="interrupted", retryable=True)


@dataclass
class Turn:
    """Everything a turn needs to run, prepared by `ChatService.begin` in one short transaction."""

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
    notices: list[str] = field(default_factory=list)
    stream: StreamRef | None = None


class TurnRunner:
    def __init__(self, db: Database, llm: LLM, limits: LoopLimits, turn: Turn) -> None:
        self.db = db
        self.llm = llm
        self.limits = limits
        self.turn = turn
        self.log = TurnLog(turn.turn_id)
        self.state = TurnState()
        self.visible = ""  # the answer's text as the user saw it (markers hidden)
        self.stopped = False
        self.failure: ApiFailure | None = None
        self.pump: Pump[AgentEvent] | None = None
        self.task: asyncio.Task[None] | None = None
        self._ending = asyncio.Event()  # set when generation is over: the checkpoints end after their write
        self.continued = False  # this runner goes on with a turn another worker started

    def from_checkpoint(self, frames: list[Frame], visible: str, saved: dict[str, Any]) -> None:
        """Continue a turn another worker left: its stored events, the text its readers saw, its state."""
        self.log.frames = list(frames)
        self.log.saved = len(frames)
        self.visible = visible
        self.continued = True
        self.state = TurnState(
            messages=saved.get("messages", []), text=saved.get("text", ""),
            partial_text=saved.get("partial_text", ""), tool_calls=saved.get("tool_calls", 0),
            tool_history=[ToolCall.model_validate(t) for t in saved.get("tool_history", [])],
            tool_payloads=[Card.model_validate(c) for c in saved.get("tool_payloads", [])],
            usage=Usage.model_validate(saved.get("usage", {})))

    def start(self) -> None:
        self.task = asyncio.create_task(self._run(), name=f"turn-{self.turn.turn_id}")

    def stop(self, failure: ApiFailure | None = None) -> None:
        """Stop generating (the user's Stop, or `failure` such as a shutdown); what was said is saved."""
        self.stopped = failure is None
        self.failure = self.failure or failure
        if self.pump is not None:
            self.pump.cancel()

    def _append(self, event: WireEvent) -> None:
        if isinstance(event, TextDelta):
            self.visible += event.text
        self.log.append(event)

    async def _run(self) -> None:
        turn = self.turn
        if not self.continued:
            self._append(ConversationOpened(conversation_id=turn.conversation_id, turn_id=turn.turn_id,
                                            user_message_id=turn.user_message_id, stream=turn.stream))
            for notice in turn.notices:
                self._append(Status(message=notice, notice=True))
        markers = [p.parse_marker for p in turn.resolved.llm_payloads if p.parse_marker]
        text_filter = MarkerFilter([*markers, SUGGESTED_VALUES, SUGGESTED_ACTIONS])
        self.pump = Pump(run_turn(
            self.llm.client, model=self.llm.model, system=turn.system.blocks(), messages=turn.messages,
            tools=turn.resolved.tools, tool_ctx=turn.tool_ctx, state=self.state, limits=self.limits))
        checkpoints = asyncio.create_task(self._checkpoints())
        try:
            try:
                async for event in visible_events(self.pump, text_filter):
                    self._append(event)
            except Exception:  # a bug in the loop must still end the turn cleanly
                log.exception("agent loop crashed")
                self.failure = ApiFailure(message="Something went wrong on our side while answering. "
                                                  "Please retry.", code="internal_error", retryable=False)
            if rest := text_filter.finish():
                self._append(TextDelta(text=rest))
        finally:
            self._ending.set()  # not cancel(): a write under way would commit behind the final save's back
            await self.pump.aclose()
            with anyio.CancelScope(shield=True):
                await asyncio.gather(checkpoints, return_exceptions=True)
                await self._finish()
                self.log.finish()

    # -- checkpoints ---------------------------------------------------------------------------------
    async def _checkpoints(self) -> None:
        while not self._ending.is_set():
            with anyio.move_on_after(CHECKPOINT_SECONDS):
                await self._ending.wait()
            if self._ending.is_set():
                return  # the final save writes the rest
            frames = self.log.unsaved()
            if not frames:
                continue
            extras = self._extras(self.state.tool_payloads, [], [], []).model_dump(mode="json")
            extras["resume_state"] = resume_state(self.state)
            # Shielded: a write that has started must be counted before the final save writes the rest.
            with anyio.CancelScope(shield=True):
                try:
                    await anyio.to_thread.run_sync(self._write_checkpoint, frames, self.visible, extras,
                                                   limiter=persist_limiter())
                except Exception:  # a missed checkpoint is retried with the next one
                    log.exception("checkpoint of turn %s failed", self.turn.turn_id)
                    continue
                self.log.saved = frames[-1].id

    def _write_checkpoint(self, frames: list[Frame], text: str, extras: dict[str, Any]) -> None:
        with self.db.session() as s:
            save_frames(s, self.turn.turn_id, frames)
            record = s.get(ChatTurn, self.turn.turn_id)
            if record is not None:
                record.last_event_id = frames[-1].id
                record.resume_state = extras.pop("resume_state")
            message = s.get(Message, self.turn.assistant_message_id)
            if message is not None and message.status == "running":
                message.content = text
                message.extras = {k: v for k, v in extras.items() if k != "resume_state"}

    # -- finish --------------------------------------------------------------------------------------
    def _extras(self, cards: list[Card], values: list[SuggestedValue], actions: list[SuggestedAction],
                errors: list[str]) -> MessageExtras:
        failure = self.failure or self.state.failure
        return MessageExtras(
            turn_id=self.turn.turn_id, payloads=cards, suggested_values=values, suggested_actions=actions,
            tool_history=self.state.tool_history,
            usage=self.state.usage.model_copy(update={"context_window": self.limits.context_window}),
            model=self.llm.label, stop_reason=self.state.stop_reason, payload_errors=errors,
            stream=self.turn.stream, blocks=self.state.history(),
            error=TurnError(message=failure.message, code=failure.code, retryable=failure.retryable)
            if failure else None)

    async def _finish(self) -> None:
        turn, state = self.turn, self.state
        failure = self.failure or state.failure
        if (failure is SHUTDOWN and not self.stopped and self.llm.mode != "demo"
                and turns.continuable(resume_state(state))):
            await self._suspend()
            return
        status: TurnStatus = "interrupted" if self.stopped or failure is SHUTDOWN else (
            "failed" if failure else "complete")
        extraction = extract(state.text + state.partial_text, turn.resolved.llm_payloads)
        for error in extraction.errors:
            log.warning("payload dropped in conversation %s: %s", turn.conversation_id, error)
        cards = [*state.tool_payloads, *(
            Card(id=uuid.uuid4().hex[:16], type=p["type"], data=p["data"], source="llm")
            for p in extraction.payloads)]
        extras = self._extras(cards, [SuggestedValue.model_validate(v) for v in extraction.suggested_values],
                              [SuggestedAction.model_validate(a) for a in extraction.suggested_actions],
                              extraction.errors)
        terminal: WireEvent
        if failure is not None and not self.stopped:
            terminal = TurnErrored(message=failure.message, code=failure.code, retryable=failure.retryable,
                                   conversation_id=turn.conversation_id, message_id=turn.assistant_message_id)
        else:
            terminal = TurnCompleted(payload=TurnResult(
                message=extraction.message, payloads=cards, suggested_values=extras.suggested_values,
                suggested_actions=extras.suggested_actions, tool_history=state.tool_history,
                conversation_id=turn.conversation_id, message_id=turn.assistant_message_id, status=status,
                usage=extras.usage or state.usage))
        frames = [*self.log.unsaved(), self.log.peek_next(terminal)]
        try:
            await anyio.to_thread.run_sync(self._save, extraction.message, extras, status, frames,
                                           limiter=persist_limiter())
        except Exception:  # the sweep will mark the turn interrupted from its last checkpoint
            log.exception("saving turn %s failed", turn.turn_id)
        self.log.append(terminal)
        self.log.saved = len(self.log.frames)

    async def _suspend(self) -> None:
        """Shutdown between tool calls: save where the turn is, for a live worker to go on with it."""
        frames, text, saved = self.log.unsaved(), self.visible, resume_state(self.state)
        extras = self._extras(self.state.tool_payloads, [], [], []).model_dump(mode="json")
        try:
            await anyio.to_thread.run_sync(self._write_suspended, frames, text, extras, saved,
                                           limiter=persist_limiter())
        except Exception:  # the sweep will mark the turn interrupted (or continue it) from its last checkpoint
            log.exception("suspending turn %s failed", self.turn.turn_id)
            return
        self.log.saved = len(self.log.frames)

    def _write_suspended(self, frames: list[Frame], text: str, extras: dict[str, Any],
                         saved: dict[str, Any]) -> None:
        with self.db.session() as s:
            record = s.get(ChatTurn, self.turn.turn_id)
            conv = s.get(Conversation, self.turn.conversation_id)
            if record is None or conv is None or record.status != "running":
                return
            frames = [f for f in frames if f.id > record.last_event_id]
            save_frames(s, self.turn.turn_id, frames)
            if frames:
                record.last_event_id = frames[-1].id
            record.status = "suspended"
            record.resume_state = saved
            message = s.get(Message, self.turn.assistant_message_id)
            if message is not None and message.status == "running":
                message.content = text
                message.extras = extras
            turns.release(conv, self.turn.turn_id)

    def _save(self, content: str, extras: MessageExtras, status: TurnStatus, frames: list[Frame]) -> None:
        with self.db.session() as s:
            if extras.usage is not None:  # the daily token budget counts every turn, kept or not
                record_usage(s, self.turn.user_id, extras.usage.model_dump())
            conv = s.get(Conversation, self.turn.conversation_id)
            if conv is None:  # deleted while the turn ran: nothing to attach the answer to
                return
            message = s.get(Message, self.turn.assistant_message_id)
            if message is not None:
                message.content = content
                message.extras = extras.model_dump(mode="json")
                message.status = status
            record = s.get(ChatTurn, self.turn.turn_id)
            if record is not None:
                frames = [f for f in frames if f.id > record.last_event_id]  # never a stored event twice
                record.status = status
                record.last_event_id = frames[-1].id
            save_frames(s, self.turn.turn_id, frames)
            conv.updated_at = utcnow()
            turns.release(conv, self.turn.turn_id)


def persist_limiter() -> anyio.CapacityLimiter:
    """The worker's own few threads for turn writes (checkpoints, final saves). Without them, 100 streams
    checkpointing twice a second fill AnyIO's shared pool (40 threads) with writes queued on the
    database's write lock, and every sync route — `/api/health`, the conversation list — waits seconds
    for a thread. With them a turn's checkpoints just come further apart under load."""
    loop = asyncio.get_running_loop()
    if (limiter := _limiters.get(loop)) is None:
        limiter = _limiters[loop] = anyio.CapacityLimiter(PERSIST_THREADS)
    return limiter


def resume_state(state: TurnState) -> dict[str, Any]:
    """What a worker needs to go on with the turn: its `TurnState` as JSON."""
    return {"messages": state.messages, "text": state.text, "partial_text": state.partial_text,
            "tool_calls": state.tool_calls, "usage": state.usage.model_dump(mode="json"),
            "tool_history": [t.model_dump(mode="json") for t in state.tool_history],
            "tool_payloads": [c.model_dump(mode="json") for c in state.tool_payloads]}

