"""The chat turn lifecycle: begin (persist the user message), run (agent loop), finish (persist the answer).

Persistence points are short sessions run in worker threads; none is open while the model streams.
Whatever ends the turn (the answer, an error, Stop, a dropped client) the assistant message is saved
once, with status complete / failed / interrupted and a history the Messages API accepts.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import AsyncIterable, AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from pydantic import BaseModel, Field, field_validator
from sqlalchemy import select

from backend.agent.errors import ApiFailure
from backend.agent.llm import LLM
from backend.agent.loop import LoopLimits, TurnState, run_turn
from backend.agent.pump import Pump
from backend.agent.schemas import (
    AgentEvent,
    Card,
    ChatEvent,
    ConversationOpened,
    MessageExtras,
    Status,
    StreamRef,
    SuggestedAction,
    SuggestedValue,
    TextDelta,
    ToolCompleted,
    TurnCompleted,
    TurnError,
    TurnErrored,
    TurnResult,
    TurnStatus,
    UsageUpdated,
)
from backend.chat import history as chat_history
from backend.chat import turns
from backend.chat.markers import SUGGESTED_ACTIONS, SUGGESTED_VALUES, MarkerFilter, extract
from backend.chat.prompt import SystemPrompt, build_system_prompt
from backend.conversations.schemas import App
from backend.conversations.service import get_owned
from backend.db.base import utcnow
from backend.db.models import Conversation, Message
from backend.db.session import Database
from backend.errors import Conflict
from backend.registry import Resolved, ToolContext, resolve
from backend.sources import Sources
from backend.streams.service import STREAM_DRAFT_KEY, stream_for_prompt, stream_info
from backend.text import clip

log = logging.getLogger(__name__)

STAGE_BUDGET = 20  # items of a staged list shown in the prompt; the rest wait in the holding pen
MAX_CONTEXT_BYTES = 2_000_000


class ChatRequest(BaseModel):
    message: str = Field(min_length=1, max_length=20_000)
    context: dict[str, Any] = Field(default_factory=dict)
    conversation_id: int | None = None
    app: App | None = None

    @field_validator("message")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("message must not be blank")
        return value

    @field_validator("context")
    @classmethod
    def _bounded(cls, value: dict[str, Any]) -> dict[str, Any]:
        if len(json.dumps(value, default=str)) > MAX_CONTEXT_BYTES:
            raise ValueError(f"context is larger than {MAX_CONTEXT_BYTES} bytes; send summaries, not records")
        return value


@dataclass
class Turn:
    user_id: int
    conversation_id: int
    app: str
    turn_id: str
    user_message_id: int
    messages: list[dict[str, Any]]
    system: SystemPrompt
    resolved: Resolved
    tool_ctx: ToolContext
    notices: list[str] = field(default_factory=list)
    stream: StreamRef | None = None


@dataclass
class RunningTurn:
    user_id: int
    pump: Pump[AgentEvent]
    stopped: bool = False

    def stop(self) -> None:
        self.stopped = True
        self.pump.cancel()


def stage_items(context: Mapping[str, Any], keys: tuple[str, ...],
                budget: int = STAGE_BUDGET) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """The holding pen: every item list is staged for `get_staged_items`; the prompt lists only the first
    `budget` of a long one and says how many there are."""
    shown = dict(context)
    staged: dict[str, list[dict[str, Any]]] = {}
    counts: dict[str, int] = {}
    for key in keys:
        items = context.get(key)
        if isinstance(items, list) and items:
            staged[key] = [i for i in items if isinstance(i, dict)]
            if len(items) > budget:
                shown[key] = items[:budget]
                counts[key] = len(items)
    if counts:
        shown["_staged"] = counts
    return shown, staged


class ChatService:
    def __init__(self, db: Database, llm: LLM, sources: Sources | None = None,
                 limits: LoopLimits | None = None) -> None:
        self.db = db
        self.llm = llm
        self.sources = sources
        self.limits = limits or LoopLimits()
        self.running: dict[int, RunningTurn] = {}  # turns of this worker, for an immediate Stop
        self.poll_seconds = 1.0  # how often a turn checks for a Stop sent to another worker

    # -- begin ---------------------------------------------------------------------------------------
    def prepare_prompt(self, s: Any, context: Mapping[str, Any]) -> tuple[
            Resolved, SystemPrompt, dict[str, Any], list[str], StreamRef | None]:
        """Resolve the page, stage long lists and build the system prompt (also used by the preview).
        Returns the active stream (`stream_info`) last; an admin's draft replaces its saved instructions."""
        resolved = resolve(context.get("current_page"), context.get("active_tab"), context.get("active_subtab"))
        keys = resolved.page.staged_keys if resolved.page else ()
        page_context = {k: v for k, v in context.items() if k != STREAM_DRAFT_KEY}  # instructions, not page data
        shown, staged = stage_items(page_context, keys)
        stream, notices = stream_for_prompt(s, context.get("stream_id"), context.get(STREAM_DRAFT_KEY))
        info = stream_info(stream)
        return (resolved, build_system_prompt(resolved, shown, stream), staged, notices,
                StreamRef.model_validate(info) if info else None)

    async def begin(self, user_id: int, req: ChatRequest) -> Turn:
        return await anyio.to_thread.run_sync(self._begin, user_id, req)

    def _begin(self, user_id: int, req: ChatRequest) -> Turn:
        context = req.context
        turn_id = uuid.uuid4().hex
        with self.db.session() as s:
            resolved, system, staged, notices, stream = self.prepare_prompt(s, context)
            if req.conversation_id is None:
                app = req.app or (resolved.page.app if resolved.page else "kh")
                conv = Conversation(user_id=user_id, app=app, title=_title(req.message))
                s.add(conv)
                s.flush()
                rows: list[Message] = []
            else:
                conv = get_owned(s, user_id, req.conversation_id)
                rows = list(s.scalars(select(Message).where(Message.conversation_id == conv.id)
                                      .order_by(Message.id)))
            if not turns.claim(s, conv.id, turn_id):
                raise Conflict("A turn is already running in this conversation; stop it or wait for it to end.")
            user_msg = Message(conversation_id=conv.id, role="user", content=req.message, context=context,
                               extras={}, status="complete")
            s.add(user_msg)
            conv.updated_at = utcnow()
            s.flush()
            messages = chat_history.build_history(rows, req.message)
            return Turn(
                user_id=user_id, conversation_id=conv.id, app=conv.app, turn_id=turn_id,
                user_message_id=user_msg.id, messages=messages, system=system, resolved=resolved,
                tool_ctx=ToolContext(sources=self.sources, user_id=user_id, conversation_id=conv.id,
                                     page_context=context, staged=staged),
                notices=notices, stream=stream)

    # -- run -----------------------------------------------------------------------------------------
    async def run(self, turn: Turn) -> AsyncIterator[ChatEvent]:
        """Yield the turn's events; always saves the assistant message exactly once."""
        yield ConversationOpened(conversation_id=turn.conversation_id, turn_id=turn.turn_id,
                                 user_message_id=turn.user_message_id, stream=turn.stream)
        for notice in turn.notices:
            yield Status(message=notice, notice=True)
        state = TurnState()
        pump: Pump[AgentEvent] = Pump(run_turn(
            self.llm.client, model=self.llm.model, system=turn.system.blocks(), messages=turn.messages,
            tools=turn.resolved.tools, tool_ctx=turn.tool_ctx, state=state, limits=self.limits))
        running = RunningTurn(user_id=turn.user_id, pump=pump)
        self.running[turn.conversation_id] = running
        watcher = asyncio.create_task(self._watch(turn, running))
        markers = [p.parse_marker for p in turn.resolved.llm_payloads if p.parse_marker]
        text_filter = MarkerFilter([*markers, SUGGESTED_VALUES, SUGGESTED_ACTIONS])
        saved = False
        try:
            try:
                async for event in visible_events(pump, text_filter):
                    yield event
            except Exception:  # a bug in the loop must still end the turn cleanly
                log.exception("agent loop crashed")
                state.failure = ApiFailure(message="Something went wrong on our side while answering. "
                                                   "Please retry.", code="internal_error", retryable=False)
            if rest := text_filter.flush():
                yield TextDelta(text=rest)
            status: TurnStatus = "interrupted" if running.stopped else ("failed" if state.failure else "complete")
            result = await self._finish(turn, state, status)
            saved = True
            if state.failure:
                yield TurnErrored(message=state.failure.message, code=state.failure.code,
                                  retryable=state.failure.retryable, conversation_id=turn.conversation_id,
                                  message_id=result.message_id)
            else:
                yield TurnCompleted(payload=result)
        finally:
            watcher.cancel()
            await pump.aclose()
            if not saved:  # the client went away: keep what was said so far
                with anyio.CancelScope(shield=True):
                    await self._finish(turn, state, "interrupted")
            self.running.pop(turn.conversation_id, None)

    async def _watch(self, turn: Turn, running: RunningTurn) -> None:
        """Stop asked on another worker, seen through the database; renews the turn's lease meanwhile."""
        polls = 0
        renew_every = max(1, int(turns.LEASE.total_seconds() / 3 / self.poll_seconds))
        while True:
            await asyncio.sleep(self.poll_seconds)
            polls += 1
            renew = polls % renew_every == 0

            def check(renew: bool = renew) -> bool:
                with self.db.session() as s:
                    return turns.poll(s, turn.conversation_id, turn.turn_id, renew)

            if await anyio.to_thread.run_sync(check):
                running.stop()
                return

    async def stop(self, user_id: int, conversation_id: int) -> bool:
        """Stop the running turn of a conversation, on this worker at once or on another through the
        database (the caller has checked ownership). False when no turn is running."""
        running = self.running.get(conversation_id)
        if running is not None and running.user_id == user_id:
            running.stop()
            return True

        def ask() -> bool:
            with self.db.session() as s:
                return turns.request_stop(s, user_id, conversation_id)

        return await anyio.to_thread.run_sync(ask)

    # -- finish --------------------------------------------------------------------------------------
    async def _finish(self, turn: Turn, state: TurnState, status: TurnStatus) -> TurnResult:
        extraction = extract(state.text + state.partial_text, turn.resolved.llm_payloads)
        for error in extraction.errors:
            log.warning("payload dropped in conversation %s: %s", turn.conversation_id, error)
        cards = [*state.tool_payloads, *(
            Card(id=uuid.uuid4().hex[:16], type=p["type"], data=p["data"], source="llm")
            for p in extraction.payloads)]
        usage = state.usage.model_copy(update={"context_window": self.limits.context_window})
        extras = MessageExtras(
            turn_id=turn.turn_id, payloads=cards,
            suggested_values=[SuggestedValue.model_validate(v) for v in extraction.suggested_values],
            suggested_actions=[SuggestedAction.model_validate(a) for a in extraction.suggested_actions],
            tool_history=state.tool_history, usage=usage, model=self.llm.label, stop_reason=state.stop_reason,
            payload_errors=extraction.errors, stream=turn.stream, blocks=state.history(),
            error=TurnError(message=state.failure.message, code=state.failure.code) if state.failure else None)
        message_id = await anyio.to_thread.run_sync(self._save, turn, extraction.message, extras, status)
        return TurnResult(
            message=extraction.message, payloads=cards, suggested_values=extras.suggested_values,
            suggested_actions=extras.suggested_actions, tool_history=state.tool_history,
            conversation_id=turn.conversation_id, message_id=message_id, status=status, usage=usage)

    def _save(self, turn: Turn, content: str, extras: MessageExtras, status: str) -> int:
        with self.db.session() as s:
            conv = s.get(Conversation, turn.conversation_id)
            if conv is None:  # deleted while the turn ran: nothing to attach the answer to
                return 0
            msg = Message(conversation_id=conv.id, role="assistant", content=content, context=None,
                          extras=extras.model_dump(mode="json"), status=status)
            s.add(msg)
            conv.updated_at = utcnow()
            turns.release(conv, turn.turn_id)
            s.flush()
            return msg.id


def visible_events(events: AsyncIterable[Any], text_filter: MarkerFilter) -> AsyncIterator[AgentEvent]:
    """The loop's events with marker text held back: text deltas pass through the filter, and text held
    at a model call's end (its usage) or a tool's end is released once it can't be a marker."""

    async def transform() -> AsyncIterator[AgentEvent]:
        async for event in events:
            if isinstance(event, TextDelta):
                if visible := text_filter.feed(event.text):
                    yield TextDelta(text=visible)
                continue
            if isinstance(event, UsageUpdated | ToolCompleted) and (rest := text_filter.flush()):
                yield TextDelta(text=rest)
            yield event

    return transform()


def _title(message: str) -> str:
    return clip(message, 60, squash=True)
