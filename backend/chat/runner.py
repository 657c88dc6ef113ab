"""One turn's generation on this worker, apart from any connection that reads it.

The runner drives the agent loop, hides marker text, appends every event to the turn's `TurnLog` (text
deltas that come close together as one: `chat/coalesce.py`), hands its checkpoints to the worker's
`ProgressWriter` (`progress`: what is new since the last one) and, at the end, saves the answer and the
terminal event (`chat/turns.py` writes them). A turn stopped by a shutdown between tool calls is saved
`suspended` instead, and a live worker that takes it over starts a runner `from_checkpoint`: the saved
events are its log's first frames (new ids go on after any a reader may hold), and the model continues
the saved partial answer as an assistant prefill.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import anyio

from backend.agent.errors import ApiFailure
from backend.agent.llm import LLM
from backend.agent.loop import run_turn
from backend.agent.schemas import (
    Card,
    ContextUpdated,
    ContextUsage,
    ConversationOpened,
    MessageExtras,
    Resynced,
    Status,
    SuggestedAction,
    SuggestedValue,
    TextDelta,
    ToolCall,
    ToolStarted,
    TurnError,
    WireEvent,
)
from backend.agent.state import LoopLimits, TurnState
from backend.chat import turns
from backend.chat.coalesce import Coalescer
from backend.chat.extract import extract
from backend.chat.followups import relevant
from backend.chat.log import Frame, TurnLog
from backend.chat.markers import SUGGESTED_ACTIONS, SUGGESTED_VALUES, MarkerFilter
from backend.chat.progress import ProgressWriter, persist_limiter
from backend.chat.turn import EndStatus, ResumeState, Turn, terminal_event
from backend.chat.turns import Progress, Suspension
from backend.chat.visible import visible_events
from backend.db.session import Database
from backend.observability.observe import turn_started
from backend.registry import Resolved

log = logging.getLogger(__name__)

SHUTDOWN = ApiFailure(message="The server restarted while answering; what was written so far is kept. "
                              "Ask again to continue.", code="interrupted", retryable=True)


class TurnRunner:
    def __init__(self, db: Database, llm: LLM, limits: LoopLimits, turn: Turn, saves: ProgressWriter,
                 coalesce: float = 0.0, load: Callable[[], float] | None = None) -> None:
        self.db = db
        self.saves = saves
        self.llm = llm
        self.limits = replace(limits, max_tokens=turn.config.max_tokens, context_window=turn.config.context_window)
        self.turn = turn
        self.log = TurnLog(turn.turn_id, stored=self._stored)  # (its saved frames no reader needs: dropped)
        # Text deltas faster than `coalesce` s (scaled by the worker's `load`) share a frame.
        self.coalescer = Coalescer(coalesce, self._log, load)
        self.state = TurnState()
        self.visible = ""  # the answer's text as the user saw it (markers hidden)
        self.tool_at: dict[int, int] = {}  # tool call index → len(self.visible) when it started
        self.stopped = False
        self.generated = False  # the agent loop is over (ended, failed or stopped): only the saves are left
        self.failure: ApiFailure | None = None
        # Stop cancels the generation (the agent loop runs in this task: no queue hop per delta), never
        # the saves after it; cancelled before the turn reaches it, the generation never starts.
        self.generating = anyio.CancelScope()
        self.task: asyncio.Task[None] | None = None
        self.continued = False  # this runner goes on with a turn another worker started
        self.lost_after: int | None = None  # its worker died: readers may hold unstored events after this id
        self._checkpoint_key: tuple[Any, ...] | None = None
        self._checkpoint_parts: tuple[dict[str, Any], ResumeState] = ({}, ResumeState())
        self._text_written = 0  # len(self.visible) when a checkpoint last wrote the answer's text

    def from_checkpoint(self, frames: list[Frame], visible: str, saved: ResumeState, floor: int) -> None:
        """Continue a turn another worker left: its stored events, the text its readers saw, its state;
        new events numbered after `floor`, the highest id its readers may hold."""
        self.log.go_on_from(frames, floor)
        self.visible = visible
        self.continued = True
        stored = frames[-1].id if frames else 0
        self.lost_after = stored if floor > stored else None  # (a suspended turn stored all it sent)
        self.state = saved.state()

    def start(self) -> None:
        turn = self.turn
        if not self.continued:  # logged before any reader follows: one told at once to resume knows its turn
            self._append(ConversationOpened(conversation_id=turn.conversation_id, turn_id=turn.turn_id,
                                            user_message_id=turn.user_message_id, stream=turn.stream))
            for notice in turn.notices:
                self._append(Status(message=notice, notice=True))
        elif self.lost_after is not None:  # what its readers got past the last save comes again: void it
            self._append(Resynced(after=self.lost_after, text=self.visible))
        self.task = asyncio.create_task(self._run(), name=f"turn-{turn.turn_id}")

    def stop(self, failure: ApiFailure | None = None) -> None:
        """Stop generating (the user's Stop, or `failure` such as a shutdown); what was said is saved.
        Once the generation is over the turn ends as it did: a drain that comes while its final save
        waits for a checkpoint must not make a finished answer interrupted."""
        if self.generated:
            return
        self.stopped = failure is None
        self.failure = self.failure or failure
        self.generating.cancel()

    def _append(self, event: WireEvent) -> None:
        if isinstance(event, TextDelta):
            self.coalescer.add(event)
            return
        self.coalescer.flush()
        self._log(event)

    def _log(self, event: WireEvent) -> None:
        if isinstance(event, TextDelta):
            if not self.visible:
                self.observed.first_chunk()
            self.visible += event.text
        elif isinstance(event, ToolStarted):
            self.tool_at[event.index] = len(self.visible)
        self.log.append(event)
        self.saves.appended(self)  # written at once when read on another instance (`ProgressWriter.watch`)

    async def _stored(self, after: int) -> list[Frame]:
        def read() -> list[Frame]:
            with self.db.session() as s:
                return turns.stored_frames(s, self.turn.turn_id, after)
        return await anyio.to_thread.run_sync(read)

    def _tool_history(self) -> list[ToolCall]:
        """The turn's tool calls, each with where in the visible text it began."""
        return [t.model_copy(update={"at": self.tool_at.get(i)}) for i, t in enumerate(self.state.tool_history)]

    async def _run(self) -> None:
        turn = self.turn
        self.observed = turn_started(turn, self.continued)  # metrics, the turn's span, its log ids
        markers = [p.parse_marker for p in turn.resolved.llm_payloads if p.parse_marker]
        text_filter = MarkerFilter([*markers, SUGGESTED_VALUES, SUGGESTED_ACTIONS])
        events = visible_events(run_turn(
            self.llm.client, model=turn.config.model, system=turn.system.blocks(), messages=turn.messages,
            tools=turn.resolved.tools, tool_ctx=turn.tool_ctx, state=self.state, limits=self.limits), text_filter)
        self.saves.join(self)
        try:
            with self.generating:
                try:
                    async for event in events:
                        self._append(event)
                except Exception:  # a bug in the loop must still end the turn cleanly
                    log.exception("agent loop crashed")
                    self.failure = ApiFailure(message="Something went wrong on our side while answering. "
                                                      "Please retry.", code="internal_error", retryable=False)
            if rest := text_filter.finish():
                self._append(TextDelta(text=rest))
        finally:
            self.generated = True
            with anyio.CancelScope(shield=True):
                await events.aclose()  # a stopped loop unwinds (closes its model stream) before the saves
                self.coalescer.flush()  # (Stop too: its readers get all the text the model sent)
                if not self.suspends:
                    if (context := self._context_usage()) is not None:
                        self._append(ContextUpdated(**context.model_dump()))
                    if not (self.stopped or self.failure or self.state.failure):
                        await self.saves.flush(self)  # its last events to readers elsewhere, not behind its end
                await self.saves.leave(self)  # after a checkpoint under way: the final save writes the rest
                await self._finish()
                self.observed.ended(self.stopped, self.failure or self.state.failure)
                self.log.finish()

    # -- checkpoints ---------------------------------------------------------------------------------
    def progress(self) -> Progress | None:
        """What the next checkpoint saves (the worker's `ProgressWriter` asks every half second), by the
        checkpoint policy that `chat/turns.py` explains."""
        # The resume state holds all the text the model sent, so the frames it covers must too.
        self.coalescer.flush()
        frames = self.log.unsaved()
        if not frames:
            return None
        key = self._structure()
        if key == self._checkpoint_key and len(self.visible) < 2 * self._text_written:
            return Progress(self.turn.turn_id, self.turn.assistant_message_id, frames)
        self._text_written = max(len(self.visible), 1)
        extras, resumed = self._checkpoint_state(key, frames[-1].id)
        return Progress(self.turn.turn_id, self.turn.assistant_message_id, frames, self.visible, extras, resumed)

    def _structure(self) -> tuple[Any, ...]:
        """What changes when a model call ends, a tool runs or usage comes in (not while text streams)."""
        state = self.state
        return (len(state.messages), len(state.tool_history), len(state.tool_payloads), state.tool_calls,
                tuple(state.usage.__dict__.values()), state.last_input_tokens, state.stop_reason,
                self.failure or state.failure)

    def _checkpoint_state(self, key: tuple[Any, ...], through: int) -> tuple[dict[str, Any], ResumeState]:
        """The answer's extras so far and the resume state. While a model call streams, only its text
        changes, and that is in `blocks`, `text` and `partial_text`: the rest is built once per change of
        the turn's structure, not on every checkpoint, to keep the event loop free for the streams."""
        state = self.state
        if self._checkpoint_key != key:
            self._checkpoint_key = key
            self._checkpoint_parts = (self._extras(state.tool_payloads, [], [], []).model_dump(mode="json"),
                                      ResumeState.of(state))
        extras, resumed = self._checkpoint_parts
        return ({**extras, "blocks": state.history()},
                replace(resumed, text=state.text, partial_text=state.partial_text, through=through))

    # -- finish --------------------------------------------------------------------------------------
    def _extras(self, cards: list[Card], values: list[SuggestedValue], actions: list[SuggestedAction],
                errors: list[str]) -> MessageExtras:
        failure = self.failure or self.state.failure
        return MessageExtras(
            turn_id=self.turn.turn_id, payloads=cards, suggested_values=values, suggested_actions=actions,
            tool_history=self._tool_history(),
            usage=self.state.usage.model_copy(update={"context_window": self.limits.context_window}),
            context_usage=self._context_usage(),
            model=self.llm.label_for(self.turn.config.model), stop_reason=self.state.stop_reason,
            payload_errors=errors,
            stream=self.turn.stream, blocks=self.state.history(),
            error=TurnError(message=failure.message, code=failure.code, retryable=failure.retryable)
            if failure else None)

    def _context_usage(self) -> ContextUsage | None:
        """How full the next request will be; None until a model call of this turn finished."""
        if self.state.last_input_tokens is None:
            return None
        config = self.turn.config
        return ContextUsage(input_tokens=self.state.last_input_tokens, context_window=config.context_window,
                            model=config.model, turns=self.turn.turns, compaction=config.compaction)

    @property
    def suspends(self) -> bool:
        """Stopped by a shutdown where the model can go on: the turn is saved `suspended`, not ended."""
        failure = self.failure or self.state.failure
        return (failure is SHUTDOWN and not self.stopped and self.llm.mode != "demo"
                and ResumeState.of(self.state).continuable)

    def suspension(self) -> Suspension:
        """Where the turn is: every frame its readers may hold, the answer so far, its resume state."""
        self.coalescer.flush()
        turn = self.turn
        extras = self._extras(self.state.tool_payloads, [], [], []).model_dump(mode="json")
        return Suspension(turn.turn_id, turn.conversation_id, turn.assistant_message_id, self.log.unsaved(),
                          self.visible, extras, ResumeState.of(self.state))

    async def _finish(self) -> None:
        turn, state = self.turn, self.state
        if self.suspends:
            await self._suspend()
            return
        failure = self.failure or state.failure
        status: EndStatus = "interrupted" if self.stopped or failure is SHUTDOWN else (
            "failed" if failure else "complete")
        extraction = extract(state.text + state.partial_text, turn.resolved.llm_payloads)
        for error in extraction.errors:
            # The marker's name only: the reason can quote the answer (a schema error names the value).
            log.warning("payload dropped in conversation %s: %s", turn.conversation_id, error.split(":", 1)[0])
        cards = [*state.tool_payloads, *(
            Card(id=uuid.uuid4().hex[:16], type=p["type"], data=p["data"], source="llm")
            for p in extraction.payloads)]
        actions, action_errors = _page_actions(extraction.suggested_actions, turn.resolved)
        chips = relevant([SuggestedValue.model_validate(v) for v in extraction.suggested_values], turn.messages,
                         turn.tool_ctx.page_context, extraction.message)
        extras = self._extras(cards, chips, actions, [*extraction.errors, *action_errors])
        terminal = terminal_event(turn.conversation_id, turn.assistant_message_id, status,
                                  None if self.stopped else extras.error, extraction.message, extras)
        frames = [*self.log.unsaved(), self.log.peek_next(terminal)]
        try:
            await anyio.to_thread.run_sync(self._save, extraction.message, extras, status, frames,
                                           limiter=persist_limiter())
        except Exception:  # the sweep will mark the turn interrupted from its last checkpoint
            log.exception("saving turn %s failed", turn.turn_id)
        self.log.mark_saved(self.log.append(terminal).id)

    async def _suspend(self) -> None:
        """Shutdown between tool calls: save where the turn is, for a live worker to go on with it."""
        suspension = self.suspension()
        if await self.saves.suspend(suspension) and suspension.frames:
            self.log.mark_saved(suspension.frames[-1].id)

    def _save(self, content: str, extras: MessageExtras, status: EndStatus, frames: list[Frame]) -> None:
        turn = self.turn
        with self.db.session() as s:
            turns.save_end(s, user_id=turn.user_id, conversation_id=turn.conversation_id, turn_id=turn.turn_id,
                           message_id=turn.assistant_message_id, content=content, extras=extras, status=status,
                           frames=frames, model=extras.model or turn.config.model)


def _page_actions(raw: list[dict[str, Any]], resolved: Resolved) -> tuple[list[SuggestedAction], list[str]]:
    """The suggested actions the page can carry out: a client action the page does not declare would be a
    dead button, so it is dropped (and said why); server actions come back to the model, any name."""
    declared = {a.action for a in resolved.page.client_actions} if resolved.page else set()
    kept: list[SuggestedAction] = []
    errors: list[str] = []
    for item in raw:
        action = SuggestedAction.model_validate(item)
        if action.handler == "client" and action.action not in declared:
            errors.append(f"suggested_actions: {action.action!r} is not a client action of this page; dropped")
        else:
            kept.append(action)
    return kept, errors
