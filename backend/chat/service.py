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
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
from pydantic import BaseModel, Field, field_validator
from sqlalchemy import select

from backend.agent.events import (
    AgentEvent,
    Event,
    Status,
    TextDelta,
    ToolCompleted,
    TurnFailed,
    UsageUpdated,
)
from backend.agent.llm import LLM
from backend.agent.loop import LoopLimits, TurnState, run_turn
from backend.chat import history as chat_history
from backend.chat import turns
from backend.chat.markers import SUGGESTED_ACTIONS, SUGGESTED_VALUES, MarkerFilter, extract
from backend.chat.prompt import SystemPrompt, build_system_prompt
from backend.conversations.schemas import App
from backend.conversations.service import get_owned
from backend.db.base import utcnow
from backend.db.ids import DbId
from backend.db.models import Conversation, Message
from backend.db.session import Database
from backend.errors import Conflict, InvalidInput
from backend.registry import Resolved, ToolContext, resolve
from backend.streams.service import STREAM_DRAFT_KEY, stream_for_prompt, stream_info

log = logging.getLogger(__name__)

STAGE_BUDGET = 20  # items of a staged list shown in the prompt; the rest wait in the holding pen
MAX_CONTEXT_BYTES = 2_000_000


class ChatRequest(BaseModel):
    message: str = Field(min_length=1, max_length=20_000)
    context: dict[str, Any] = Field(default_factory=dict)
    conversation_id: DbId | None = None
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


@dataclass(frozen=True)
class ConversationOpened(Event):
    conversation_id: int
    turn_id: str
    user_message_id: int
    stream: dict[str, Any] | None = None  # the research stream whose instructions shape this turn
    type: Literal["conversation"] = "conversation"

    def to_data(self) -> dict[str, Any]:
        data = super().to_data()
        if self.stream is None:  # the key exists only inside a stream: turns without one are unchanged
            del data["stream"]
        return data


@dataclass(frozen=True)
class TurnCompleted(Event):
    payload: dict[str, Any]
    type: Literal["complete"] = "complete"


@dataclass(frozen=True)
class TurnErrored(Event):
    message: str
    code: str
    retryable: bool
    conversation_id: int
    message_id: int | None
    type: Literal["error"] = "error"


ChatEvent = AgentEvent | ConversationOpened | TurnCompleted | TurnErrored


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
    stream: dict[str, Any] | None = None


@dataclass
class RunningTurn:
    user_id: int
    task: asyncio.Task[None]
    stopped: bool = False


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
    def __init__(self, db: Database, llm: LLM, services: Mapping[str, Any] | None = None,
                 limits: LoopLimits | None = None) -> None:
        self.db = db
        self.llm = llm
        self.services = dict(services or {})
        self.limits = limits or LoopLimits()
        self.running: dict[int, RunningTurn] = {}  # turns of this worker, for an immediate Stop
        self.poll_seconds = 1.0  # how often a turn checks for a Stop sent to another worker

    # -- begin ---------------------------------------------------------------------------------------
    def prepare_prompt(self, s: Any, context: Mapping[str, Any]) -> tuple[Resolved, SystemPrompt, dict[str, Any],
                                                                         list[str], dict[str, Any] | None]:
        """Resolve the page, stage long lists and build the system prompt (also used by the preview).
        Returns the active stream (`stream_info`) last; an admin's draft replaces its saved instructions."""
        resolved = resolve(context.get("current_page"), context.get("active_tab"), context.get("active_subtab"))
        keys = resolved.page.staged_keys if resolved.page else ()
        page_context = {k: v for k, v in context.items() if k != STREAM_DRAFT_KEY}  # instructions, not page data
        shown, staged = stage_items(page_context, keys)
        stream, notices = stream_for_prompt(s, context.get("stream_id"), context.get(STREAM_DRAFT_KEY))
        return resolved, build_system_prompt(resolved, shown, stream), staged, notices, stream_info(stream)

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
                tool_ctx=ToolContext(user_id=user_id, conversation_id=conv.id, page_context=context,
                                     staged=staged, services=self.services),
                notices=notices, stream=stream)

    # -- run -----------------------------------------------------------------------------------------
    async def run(self, turn: Turn) -> AsyncIterator[ChatEvent]:
        """Yield the turn's events; always saves the assistant message exactly once."""
        yield ConversationOpened(conversation_id=turn.conversation_id, turn_id=turn.turn_id,
                                 user_message_id=turn.user_message_id, stream=turn.stream)
        for notice in turn.notices:
            yield Status(message=notice, notice=True)
        state = TurnState()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        done = object()

        async def produce() -> None:
            try:
                async for event in run_turn(
                        self.llm.client, model=self.llm.model, system=turn.system.blocks(),
                        messages=turn.messages, tools=turn.resolved.tools, tool_ctx=turn.tool_ctx,
                        state=state, limits=self.limits):
                    queue.put_nowait(event)
            except Exception as exc:  # a bug in the loop must still end the turn cleanly
                log.exception("agent loop crashed")
                queue.put_nowait(TurnFailed(message=f"Internal error: {exc}", code="internal_error",
                                            retryable=False))
            finally:
                queue.put_nowait(done)

        task = asyncio.create_task(produce())
        running = RunningTurn(user_id=turn.user_id, task=task)
        self.running[turn.conversation_id] = running
        watcher = asyncio.create_task(self._watch(turn, running))
        markers = [p.parse_marker for p in turn.resolved.llm_payloads if p.parse_marker]
        text_filter = MarkerFilter([*markers, SUGGESTED_VALUES, SUGGESTED_ACTIONS])
        failure: TurnFailed | None = None
        saved = False
        try:
            while (event := await queue.get()) is not done:
                if isinstance(event, TextDelta):
                    if visible := text_filter.feed(event.text):
                        yield TextDelta(text=visible)
                    continue
                if isinstance(event, UsageUpdated | ToolCompleted | TurnFailed) and (rest := text_filter.flush()):
                    yield TextDelta(text=rest)
                if isinstance(event, TurnFailed):
                    failure = event
                else:
                    yield event
            if rest := text_filter.flush():
                yield TextDelta(text=rest)
            status = "interrupted" if running.stopped else ("failed" if failure else "complete")
            message_id, payload = await self._finish(turn, state, status, failure)
            saved = True
            if failure:
                yield TurnErrored(message=failure.message, code=failure.code, retryable=failure.retryable,
                                  conversation_id=turn.conversation_id, message_id=message_id)
            else:
                yield TurnCompleted(payload=payload)
        finally:
            watcher.cancel()
            if not task.done():
                task.cancel()
            with anyio.CancelScope(shield=True):
                await asyncio.gather(task, return_exceptions=True)
                if not saved:  # the client went away: keep what was said so far
                    await self._finish(turn, state, "interrupted", None)
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
                running.stopped = True
                running.task.cancel()
                return

    async def stop(self, user_id: int, conversation_id: int) -> bool:
        """Stop the running turn of a conversation, on this worker at once or on another through the
        database (the caller has checked ownership). False when no turn is running."""
        running = self.running.get(conversation_id)
        if running is not None and running.user_id == user_id:
            running.stopped = True
            running.task.cancel()
            return True

        def ask() -> bool:
            with self.db.session() as s:
                return turns.request_stop(s, user_id, conversation_id)

        return await anyio.to_thread.run_sync(ask)

    # -- finish --------------------------------------------------------------------------------------
    async def _finish(self, turn: Turn, state: TurnState, status: str,
                      failure: TurnFailed | None) -> tuple[int, dict[str, Any]]:
        raw_text = state.text + state.partial_text
        extraction = extract(raw_text, turn.resolved.llm_payloads)
        for error in extraction.errors:
            log.warning("payload dropped in conversation %s: %s", turn.conversation_id, error)
        payloads = [{"id": p["id"], "type": p["type"], "data": p["data"], "source": "tool", "decision": None}
                    for p in state.tool_payloads]
        payloads += [{"id": uuid.uuid4().hex[:16], "type": p["type"], "data": p["data"], "source": "llm",
                      "decision": None} for p in extraction.payloads]
        usage: dict[str, Any] = dict(state.usage, context_window=self.limits.context_window)
        extras = {
            "turn_id": turn.turn_id, "payloads": payloads, "suggested_values": extraction.suggested_values,
            "suggested_actions": extraction.suggested_actions, "tool_history": state.tool_history,
            "usage": usage, "model": self.llm.label, "stop_reason": state.stop_reason,
            "payload_errors": extraction.errors, "blocks": state.history(),
        }
        if turn.stream:
            extras["stream"] = turn.stream
        if failure:
            extras["error"] = {"message": failure.message, "code": failure.code}
        message_id = await anyio.to_thread.run_sync(self._save, turn, extraction.message, extras, status)
        payload = {
            "message": extraction.message,
            "custom_payload": ({k: payloads[0][k] for k in ("id", "type", "data")} if payloads else None),
            "payloads": [{k: p[k] for k in ("id", "type", "data", "source")} for p in payloads],
            "suggested_values": extraction.suggested_values,
            "suggested_actions": extraction.suggested_actions,
            "tool_history": [{k: h[k] for k in ("tool_name", "input", "output")} for h in state.tool_history],
            "conversation_id": turn.conversation_id, "message_id": message_id, "status": status,
            "usage": usage,
        }
        return message_id, payload

    def _save(self, turn: Turn, content: str, extras: dict[str, Any], status: str) -> int:
        with self.db.session() as s:
            conv = s.get(Conversation, turn.conversation_id)
            if conv is None:  # deleted while the turn ran: nothing to attach the answer to
                return 0
            msg = Message(conversation_id=conv.id, role="assistant", content=content, context=None,
                          extras=extras, status=status)
            s.add(msg)
            conv.updated_at = utcnow()
            turns.release(conv, turn.turn_id)
            s.flush()
            return msg.id


def _title(message: str) -> str:
    words = " ".join(message.split())
    return words if len(words) <= 60 else words[:57].rstrip() + "…"


def validate_app(app: str) -> str:
    if app not in ("kh", "tablizer", "trialscout"):
        raise InvalidInput(f"Unknown app {app!r}: use kh, tablizer or trialscout.")
    return app
