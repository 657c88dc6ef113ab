"""The chat turn lifecycle: begin (one transaction), generate (a task of this worker), read (any worker).

`submit` stores the user message and the assistant message-to-be, claims the conversation and starts a
`TurnRunner`; what the HTTP response streams is a reader of the turn's log, so a client that leaves,
freezes or reloads changes nothing about the answer, and `resume` attaches to it again from any worker.
One send is one turn: an `Idempotency-Key` seen before attaches to its turn instead of starting another.
Persistence points are short sessions run in worker threads; none is open while the model streams.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from datetime import timedelta
from typing import Any

import anyio
from pydantic import BaseModel, Field, field_validator, model_validator
from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError

from backend.agent.llm import LLM
from backend.agent.loop import LoopLimits
from backend.agent.schemas import (
    MessageExtras,
    StreamRef,
    TurnCompleted,
    TurnErrored,
    TurnResult,
    Usage,
    WireEvent,
)
from backend.chat import history as chat_history
from backend.chat import turns
from backend.chat.actions import ActionRequest, action_message, offered_action
from backend.chat.log import Frame, follow_stored, stored_frames
from backend.chat.progress import ProgressWriter
from backend.chat.prompt import SystemPrompt, build_system_prompt
from backend.chat.runner import SHUTDOWN, Turn, TurnRunner
from backend.chat.workers import WorkerPresence
from backend.conversations import config
from backend.conversations.schemas import App, ConfigUpdate
from backend.conversations.service import get_owned
from backend.db.base import table_of, utcnow
from backend.db.ids import DbId
from backend.db.models import ChatTurn, Conversation, Message
from backend.db.session import Database
from backend.errors import Conflict, InvalidInput, NotFound
from backend.registry import Resolved, ToolContext, resolve
from backend.sources import Sources
from backend.streams.service import STREAM_DRAFT_KEY, stream_for_prompt, stream_info
from backend.text import clip

log = logging.getLogger(__name__)
_MESSAGES, _TURNS = table_of(Message), table_of(ChatTurn)
# A turn's two messages and its row, as Core INSERTs built once (the messages RETURNING their ids): as ORM
# objects their flushes were 62% of `_begin` (cProfile), as ORM bulk inserts still a third.
_NEW_MESSAGES = insert(_MESSAGES).returning(_MESSAGES.c.id, sort_by_parameter_order=True)
_NEW_TURN = insert(_TURNS)

STAGE_BUDGET = 20  # items of a staged list shown in the prompt; the rest wait in the holding pen
MAX_CONTEXT_BYTES = 256_000  # stored with every user message: pages send summaries (≈250 B a row)


class ChatRequest(BaseModel):
    message: str = Field(min_length=1, max_length=20_000)
    context: dict[str, Any] = Field(default_factory=dict)
    conversation_id: DbId | None = None
    app: App | None = None
    # A clicked server action: `message` is its label (what the chat shows), this is what the model gets.
    action: ActionRequest | None = None
    config: ConfigUpdate | None = None  # model settings to store on the conversation before this turn

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
            raise ValueError(f"context is larger than {MAX_CONTEXT_BYTES // 1000} KB; send summaries, not records")
        return value

    @model_validator(mode="after")
    def _action_answers_an_offer(self) -> ChatRequest:
        if self.action is not None and self.conversation_id is None:
            raise ValueError("an action answers an offer in a conversation: conversation_id is required")
        return self


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
        self.runners: dict[int, TurnRunner] = {}  # this worker's running turns, by conversation
        self.saves = ProgressWriter(db)  # their checkpoints: each turn's every half second, batched
        self.presence = WorkerPresence(db)  # this worker's liveness lock (held from start-up: `hold`)
        self.poll_seconds = 0.5  # how often the watcher looks for Stop asked on another worker (one query for all)
        self.read_poll_seconds = 0.25  # how often a reader of another worker's turn looks for events
        self.closing = False
        self._watcher: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.admit_stream: Callable[[Any, int], None] = lambda _s, _user_id: None  # the app's Quotas.admit_stream

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

    def _begin(self, sender: Callable[[], int], req: ChatRequest, key: str | None) -> Turn | str:
        """A new turn, or the id of the turn this idempotency key already started."""
        user_id = sender()
        fingerprint = _fingerprint(req)
        try:
            with self.db.session() as s:
                if key and (seen := turns.by_key(s, user_id, key)) is not None:
                    return _same_request(seen, fingerprint)
                return self._open_turn(s, user_id, req, key, fingerprint)
        except (IntegrityError, Conflict):
            if not key:
                raise
            with self.db.session() as s:  # a concurrent send with the same key won: attach to its turn
                seen = turns.by_key(s, user_id, key)
            if seen is None:
                raise
            return _same_request(seen, fingerprint)

    def _open_turn(self, s: Any, user_id: int, req: ChatRequest, key: str | None, fingerprint: str) -> Turn:
        context = req.context
        turn_id = uuid.uuid4().hex
        resolved, system, staged, notices, stream = self.prepare_prompt(s, context)
        if req.conversation_id is None:  # made taken by this turn: nothing can run in it, or have run
            app = req.app or (resolved.page.app if resolved.page else "kh")
            conv = Conversation(user_id=user_id, app=app, title=_title(req.message), **turns.lease(turn_id))
            s.add(conv)
            s.flush()
        else:
            conv = get_owned(s, user_id, req.conversation_id)
            if not turns.claim(s, conv.id, turn_id, self.presence):
                raise Conflict("A turn is already running in this conversation; stop it or wait for it to end.")
            turns.interrupt_stale(s, conv.id)  # a turn whose worker died leaves its progress, marked
        self.admit_stream(s, user_id)  # the stream cap, counted with this claim in its transaction (429)
        if req.config is not None:
            config.apply(self.llm, conv, req.config)
        settings = config.effective(self.llm, conv)
        rows = list(s.scalars(select(Message).where(Message.conversation_id == conv.id).order_by(Message.id)))
        action = offered_action(rows, req.action) if req.action is not None else None
        messages = chat_history.build_history(rows, action_message(action) if action else req.message,
                                              system.page_context, compact=settings.compaction)
        sent = MessageExtras(sent_content=messages[-1]["content"], action=action).model_dump(
            mode="json", exclude_defaults=True)
        opened = MessageExtras(turn_id=turn_id, model=self.llm.label_for(settings.model), stream=stream)
        user_msg_id, answer_id = s.scalars(_NEW_MESSAGES, [
            {"conversation_id": conv.id, "role": "user", "content": req.message, "context": context,
             "extras": sent, "status": "complete"},
            {"conversation_id": conv.id, "role": "assistant", "content": "", "context": None,
             "extras": opened.model_dump(mode="json"), "status": "running"}]).all()
        if req.conversation_id is not None:
            conv.updated_at = utcnow()  # (a new one has just been made)
        s.execute(_NEW_TURN, {
            "id": turn_id, "conversation_id": conv.id, "user_id": user_id, "idempotency_key": key,
            "request_hash": fingerprint, "status": "running", "user_message_id": user_msg_id,
            "assistant_message_id": answer_id, "last_event_id": 0,
            "worker_id": self.presence.id if self.presence.held else None})
        return Turn(
            user_id=user_id, conversation_id=conv.id, app=conv.app, turn_id=turn_id,
            user_message_id=user_msg_id, assistant_message_id=answer_id,
            messages=messages, system=system, resolved=resolved,
            tool_ctx=ToolContext(sources=self.sources, user_id=user_id, conversation_id=conv.id,
                                 page_context=context, staged=staged),
            config=settings, turns=1 + sum(1 for r in rows if r.role == "user"),
            notices=notices, stream=stream)

    # -- submit and read -----------------------------------------------------------------------------
    async def submit(self, sender: Callable[[], int], req: ChatRequest,
                     key: str | None = None) -> AsyncIterator[Frame]:
        """Start a turn (or find the one this key started) and return a reader of it from its first event.
        `sender` checks who sends (the session, the quotas) and returns their user id; it runs in the same
        thread as the turn's transaction, so a turn begins in one thread hop. Refusals (401, 403, 404,
        409, 422, 429) are raised here, before the first byte."""
        begun = await anyio.to_thread.run_sync(self._begin, sender, req, key)
        if isinstance(begun, str):
            return self.read(begun, 0)
        runner = TurnRunner(self.db, self.llm, self.limits, begun, self.saves)
        self.runners[begun.conversation_id] = runner
        runner.start()
        assert runner.task is not None
        self._tasks.add(runner.task)
        conversation_id = begun.conversation_id
        runner.task.add_done_callback(lambda task: self._ended(conversation_id, runner, task))
        self._ensure_watcher()
        return self.read(begun.turn_id, 0)

    def _ended(self, conversation_id: int, runner: TurnRunner, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if self.runners.get(conversation_id) is runner:
            del self.runners[conversation_id]

    async def resume(self, sender: Callable[[], int], conversation_id: int, after: int) -> AsyncIterator[Frame]:
        """A reader of the conversation's running or latest turn, from the event after `after` (`sender` as
        for `submit`, in the same thread hop)."""
        def find() -> str:
            user_id = sender()
            with self.db.session() as s:
                get_owned(s, user_id, conversation_id)
                turn = turns.latest(s, conversation_id)
                if turn is None:
                    raise NotFound(f"Conversation {conversation_id} has no turn to resume.")
                return turn.id
        return self.read(await anyio.to_thread.run_sync(find), after)

    async def read(self, turn_id: str, after: int) -> AsyncIterator[Frame]:
        """Frames with id > `after` until the terminal one: from memory when the turn runs here, else from
        the database. Ends by raising `Closing` when this server shuts down first."""
        runner = next((r for r in self.runners.values() if r.turn.turn_id == turn_id), None)
        runner = runner or await self.continue_turn(turn_id)  # a turn its worker left: go on with it here
        if runner is not None:
            async for frame in runner.log.follow(after):
                yield frame
            return
        checks = 0

        async def fetch(n: int) -> list[Frame]:
            return await anyio.to_thread.run_sync(self._stored, turn_id, n)

        async def idle() -> None:
            nonlocal checks
            checks += 1
            if checks % 8 == 0:  # every ~2 s: a turn whose worker is gone goes on here, or gets its end
                if await self.continue_turn(turn_id) is None:
                    await anyio.to_thread.run_sync(self._interrupt_if_stale, turn_id)

        async for frame in follow_stored(fetch, after, poll_seconds=self.read_poll_seconds, idle=idle,
                                         closing=lambda: self.closing):
            yield frame

    def _stored(self, turn_id: str, after: int) -> list[Frame]:
        with self.db.session() as s:
            frames = stored_frames(s, turn_id, after)
            if frames:
                return frames
            record = s.get(ChatTurn, turn_id)
            if record is None:
                return [Frame(id=after + 1, type="error", data={"message": "This turn has no more events.",
                                                                "code": "no_more_events", "retryable": False,
                                                                "type": "error"})]
            if record.status in ("running", "suspended"):  # suspended: a worker will go on with it
                return []
            # Events that are gone (a dead worker never saved them, or they were purged after a day) don't
            # hide the turn's end: its stored terminal event, else one rebuilt from the stored answer,
            # numbered after what the client has.
            end = [f for f in stored_frames(s, turn_id, record.last_event_id - 1, limit=1) if f.terminal]
            terminal = end[0] if end else _terminal_from_answer(s, record)
            return [Frame(id=after + 1, type=terminal.type, data=terminal.data)]

    def _interrupt_if_stale(self, turn_id: str) -> None:
        with self.db.session() as s:
            record = s.get(ChatTurn, turn_id)
            if record is not None and record.status in ("running", "suspended"):
                turns.interrupt_stale(s, record.conversation_id, workers=self.presence)

    # -- continue a turn another worker left ----------------------------------------------------------
    async def continue_turn(self, turn_id: str) -> TurnRunner | None:
        """Go on with a turn whose worker shut down (`suspended`) or died, from its last checkpoint, on
        this worker: the model continues the saved partial answer, the log goes on with the next id.
        None when it isn't such a turn, can't be continued, or another worker took it first."""
        if self.closing or not self.presence.held:
            return None
        try:
            taken = await anyio.to_thread.run_sync(self._take_over, turn_id)
        except Exception:  # rolled back: the turn stays as it was, for the sweep to mark interrupted
            log.exception("continuing turn %s failed", turn_id)
            return None
        if taken is None:
            return None
        turn, frames, visible, saved = taken
        runner = TurnRunner(self.db, self.llm, self.limits, turn, self.saves)
        runner.from_checkpoint(frames, visible, saved)
        log.info("turn %s continues on worker %s from event %d", turn_id, self.presence.id, len(frames))
        self.runners[turn.conversation_id] = runner
        runner.start()
        assert runner.task is not None
        self._tasks.add(runner.task)
        runner.task.add_done_callback(lambda task: self._ended(turn.conversation_id, runner, task))
        self._ensure_watcher()
        return runner

    def _take_over(self, turn_id: str) -> tuple[Turn, list[Frame], str, dict[str, Any]] | None:
        with self.db.session() as s:
            record = turns.take_over(s, turn_id, self.presence)
            if record is None or record.resume_state is None:
                return None
            user_msg = s.get(Message, record.user_message_id)
            answer = s.get(Message, record.assistant_message_id)
            conv = s.get(Conversation, record.conversation_id)
            assert user_msg is not None and answer is not None and conv is not None
            context = user_msg.context or {}
            resolved, system, staged, _notices, stream = self.prepare_prompt(s, context)
            rows = list(s.scalars(select(Message).where(Message.conversation_id == conv.id,
                                                        Message.id <= user_msg.id).order_by(Message.id)))
            settings = config.effective(self.llm, conv)
            frames: list[Frame] = []
            while batch := stored_frames(s, turn_id, frames[-1].id if frames else 0):
                frames.extend(batch)
            turn = Turn(
                user_id=record.user_id, conversation_id=conv.id, app=conv.app, turn_id=turn_id,
                user_message_id=user_msg.id, assistant_message_id=answer.id,
                messages=chat_history.build_history(rows, compact=settings.compaction), system=system,
                resolved=resolved, config=settings, turns=sum(1 for r in rows if r.role == "user"),
                tool_ctx=ToolContext(sources=self.sources, user_id=record.user_id, conversation_id=conv.id,
                                     page_context=context, staged=staged), stream=stream)
            saved, visible = record.resume_state, answer.content
            if "through" in saved:  # the text its readers were sent after the last whole checkpoint
                tail = "".join(f.data.get("text", "") for f in frames if f.id > saved["through"]
                               and f.type == "text_delta")
                saved, visible = {**saved, "partial_text": saved.get("partial_text", "") + tail}, visible + tail
            return turn, frames, visible, saved

    async def sweep_and_continue(self) -> int:
        """The sweep, after this worker went on with every turn it can take over (a rolling restart's
        suspended turns, a dead worker's): nobody needs to be reading for an answer to finish."""
        def candidates() -> list[str]:
            with self.db.session() as s:
                return list(s.scalars(select(ChatTurn.id).where(ChatTurn.status.in_(("running", "suspended")),
                                                                ChatTurn.continued < turns.MAX_CONTINUATIONS)))
        for turn_id in await anyio.to_thread.run_sync(candidates):
            if not any(r.turn.turn_id == turn_id for r in self.runners.values()):
                await self.continue_turn(turn_id)
        return await anyio.to_thread.run_sync(self.sweep)

    # -- stop, watch, sweep, shut down ---------------------------------------------------------------
    async def stop(self, user_id: int, conversation_id: int) -> bool:
        """Stop the running turn of a conversation, on this worker at once or on another through the
        database (the caller has checked ownership). False when no turn is running. A turn whose worker
        is gone is marked interrupted here and then (True): it generates no more, and the conversation
        takes the next turn at once."""
        runner = self.runners.get(conversation_id)
        if runner is not None and runner.turn.user_id == user_id:
            runner.stop()
            return True

        def ask() -> bool:
            with self.db.session() as s:
                if turns.stop_dead(s, user_id, conversation_id, self.presence):
                    return True
                return turns.request_stop(s, user_id, conversation_id)

        return await anyio.to_thread.run_sync(ask)

    def _ensure_watcher(self) -> None:
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.create_task(self._watch(), name="turn-watcher")

    async def _watch(self) -> None:
        """One watcher for all of this worker's turns: renews their leases and sees Stop asked elsewhere."""
        renew_every = max(1, int(turns.RENEW_EVERY.total_seconds() / self.poll_seconds))
        polls = 0
        while self.runners:
            await asyncio.sleep(self.poll_seconds)
            polls += 1
            leases = {cid: r.turn.turn_id for cid, r in self.runners.items()}

            def check(leases: dict[int, str] = leases, renew: bool = polls % renew_every == 0) -> set[int]:
                with self.db.session() as s:
                    return turns.renew_and_poll(s, leases, renew)

            try:
                stopped = await anyio.to_thread.run_sync(check)
            except Exception:  # the database blinked: try again on the next poll
                log.exception("turn watcher poll failed")
                continue
            for cid in stopped:
                if (runner := self.runners.get(cid)) is not None and runner.turn.turn_id == leases[cid]:
                    runner.stop()

    def sweep(self) -> int:
        """Turns left running by a worker that is gone are marked interrupted; old event logs are purged.
        Run at startup and periodically."""
        with self.db.session() as s:
            count = turns.interrupt_stale(s, workers=self.presence)
            turns.purge_events(s, utcnow() - timedelta(days=1))
        return count

    async def sweep_forever(self, every: float = 30.0) -> None:
        while True:
            await asyncio.sleep(every)
            try:
                await anyio.to_thread.run_sync(self.presence.keep)
                await self.sweep_and_continue()
            except Exception:
                log.exception("turn sweep failed")

    def close_readers(self) -> None:
        """The server is going down: every reader ends with a frame asking its client to resume. (Each open
        stream calls this when the server shuts down; the first call does it.)"""
        if self.closing:
            return
        self.closing = True
        for runner in list(self.runners.values()):
            runner.log.close()

    async def shutdown(self, timeout: float = 3.0) -> None:
        """Stop generating; each turn saves what it has, marked interrupted, within `timeout`."""
        self.close_readers()
        for runner in list(self.runners.values()):
            runner.stop(SHUTDOWN)
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=timeout)
        if self._watcher is not None:
            self._watcher.cancel()


def _terminal_from_answer(s: Any, record: ChatTurn) -> Frame:
    """A finished turn's terminal event rebuilt from its stored assistant message."""
    message = s.get(Message, record.assistant_message_id) if record.assistant_message_id else None
    extras = MessageExtras.model_validate(message.extras or {}) if message is not None else MessageExtras()
    event: WireEvent
    if extras.error is not None:
        event = TurnErrored(message=extras.error.message, code=extras.error.code,
                            retryable=extras.error.retryable, conversation_id=record.conversation_id,
                            message_id=record.assistant_message_id)
    else:
        event = TurnCompleted(payload=TurnResult(
            message=message.content if message is not None else "", payloads=extras.payloads,
            suggested_values=extras.suggested_values, suggested_actions=extras.suggested_actions,
            tool_history=extras.tool_history, conversation_id=record.conversation_id,
            message_id=record.assistant_message_id or 0, status=record.status, usage=extras.usage or Usage()))
    return Frame(id=0, type=event.type, data=event.to_data())


def _fingerprint(req: ChatRequest) -> str:
    body = json.dumps(req.model_dump(mode="json"), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(body.encode()).hexdigest()


def _same_request(seen: ChatTurn, fingerprint: str) -> str:
    if seen.request_hash != fingerprint:
        raise InvalidInput("This Idempotency-Key was already used for a different message; send the message "
                           "with a new key.")
    return seen.id


def _title(message: str) -> str:
    return clip(message, 60, squash=True)
