"""This worker's running turns: it launches their runners, takes over the turns other workers left,
watches for Stop and lapsed leases, sweeps, and shuts them down.

One watcher task serves all of the worker's turns: it renews their leases and sees Stop asked on another
worker (one query for all, every `poll_seconds`). The sweep (at start-up, then every 30 s) goes on with
every turn it can take over — a rolling restart's `suspended` turns, a dead worker's — and marks the rest
interrupted, so nobody needs to be reading for an answer to finish.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from datetime import timedelta

import anyio

from backend.agent.llm import LLM
from backend.agent.state import LoopLimits
from backend.chat import history as chat_history
from backend.chat import takeover, turns
from backend.chat.log import Frame
from backend.chat.progress import ProgressWriter
from backend.chat.prompt import prepare_prompt
from backend.chat.runner import SHUTDOWN, TurnRunner
from backend.chat.turn import ResumeState, Turn
from backend.chat.workers import WorkerPresence
from backend.conversations import config
from backend.db.base import utcnow
from backend.db.models import Conversation, Message
from backend.db.session import Database
from backend.sources import Sources

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Checkpoint:
    """A turn another worker left, as this one goes on with it: its stored events, the text its readers
    saw, and its state (both with the text streamed after the last whole checkpoint)."""

    turn: Turn
    frames: list[Frame]
    visible: str
    saved: ResumeState
    floor: int  # the highest event id any reader of the turn may hold: new ones come after it


class Supervisor:
    def __init__(self, db: Database, llm: LLM, sources: Sources | None, limits: LoopLimits) -> None:
        self.db = db
        self.llm = llm
        self.sources = sources
        self.limits = limits
        self.runners: dict[int, TurnRunner] = {}  # this worker's running turns, by conversation
        self.saves = ProgressWriter(db)  # their checkpoints: each turn's every half second, batched
        self.coalesce = 0.0  # seconds within which a turn's text deltas share a frame at full load (`chat/coalesce.py`)
        self.busy_at = 50  # turns running beside one at which this worker counts as fully loaded (`load`)
        self.presence = WorkerPresence(db)  # this worker's liveness lock (held from start-up: `hold`)
        self.poll_seconds = 0.5  # how often the watcher looks for Stop asked on another worker
        self.screenings: object | None = None  # the screening tools' store reader (`ToolContext.screenings`)
        self.closing = False
        self.closing_at = 0.0  # (monotonic) when the drain began: the first `close_readers`
        self.drain_seconds = 2.5  # from then, how long turns may take to save themselves (`shutdown`)
        self.graceful_seconds = 2.0  # from then, how long open requests may take (uvicorn's graceful shutdown)
        self._watcher: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def load(self) -> float:
        """How busy this worker is, 0 to 1: the turns running beside any one of them against `busy_at`
        (a turn alone: 0, its frames cost no one else a wait; `busy_at` 0: always 1)."""
        if not self.busy_at:
            return 1.0
        return min(1.0, max(0, len(self.runners) - 1) / self.busy_at)

    def running(self, turn_id: str) -> TurnRunner | None:
        return next((r for r in self.runners.values() if r.turn.turn_id == turn_id), None)

    def launch(self, turn: Turn, checkpoint: Checkpoint | None = None) -> TurnRunner:
        """Start generating `turn` on this worker (from `checkpoint` when another worker began it)."""
        turn.tool_ctx.screenings = self.screenings
        runner = TurnRunner(self.db, self.llm, self.limits, turn, self.saves, self.coalesce, self.load)
        if checkpoint is not None:
            runner.from_checkpoint(checkpoint.frames, checkpoint.visible, checkpoint.saved, checkpoint.floor)
        self.runners[turn.conversation_id] = runner
        if self.closing:  # begun as the drain began: saved `suspended` at once, for a live worker to answer
            runner.log.close()
            runner.stop(SHUTDOWN)
        runner.start()
        assert runner.task is not None
        self._tasks.add(runner.task)
        runner.task.add_done_callback(lambda task: self._ended(turn.conversation_id, runner, task))
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.create_task(self._watch(), name="turn-watcher")
        return runner

    def _ended(self, conversation_id: int, runner: TurnRunner, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if self.runners.get(conversation_id) is runner:
            del self.runners[conversation_id]

    # -- go on with a turn another worker left -------------------------------------------------------
    async def continue_turn(self, turn_id: str) -> TurnRunner | None:
        """Go on with a turn whose worker shut down (`suspended`) or died, from its last checkpoint, on
        this worker: the model continues the saved partial answer, the log goes on with the next id.
        None when it isn't such a turn, can't be continued, or another worker took it first."""
        if self.closing or not self.presence.held or self.llm.mode == "demo":
            return None  # the demo model can't continue a prefill: it would say its answer again
        try:
            checkpoint = await anyio.to_thread.run_sync(self._take_over, turn_id)
        except Exception:  # rolled back: the turn stays as it was, for the sweep to mark interrupted
            log.exception("continuing turn %s failed", turn_id)
            return None
        if checkpoint is None:
            return None
        log.info("turn %s continues on worker %s after event %d", turn_id, self.presence.id, checkpoint.floor)
        return self.launch(checkpoint.turn, checkpoint)

    def _take_over(self, turn_id: str) -> Checkpoint | None:
        with self.db.session() as s:
            record = takeover.take_over(s, turn_id, self.presence)
            saved = ResumeState.load(record.resume_state) if record is not None else None
            if record is None or saved is None:
                return None
            user_msg = s.get(Message, record.user_message_id)
            answer = s.get(Message, record.assistant_message_id)
            conv = s.get(Conversation, record.conversation_id)
            assert user_msg is not None and answer is not None and conv is not None
            context = user_msg.context or {}
            rows = turns.messages_of(s, conv.id, through=user_msg.id)
            settings = config.effective(self.llm, conv)
            frames = turns.all_frames(s, turn_id)
            turn = Turn.make(
                turn_id=turn_id, user_id=record.user_id, conversation_id=conv.id, app=conv.app,
                user_message_id=user_msg.id, assistant_message_id=answer.id,
                messages=chat_history.build_history(rows, compact=settings.compaction),
                prompt=prepare_prompt(s, context), context=context, config=settings,
                turns=sum(1 for r in rows if r.role == "user"), sources=self.sources)
            visible = answer.content
            if saved.through is not None:  # the text its readers were sent after the last whole checkpoint
                tail = "".join(f.data.get("text", "") for f in frames if f.id > saved.through
                               and f.type == "text_delta")
                saved, visible = saved.caught_up(tail), visible + tail
            return Checkpoint(turn, frames, visible, saved, record.last_event_id)

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
        """Turns left running by a worker that is gone are marked interrupted; old event logs are purged."""
        with self.db.session() as s:
            count = turns.interrupt_stale(s, workers=self.presence)
            turns.purge_events(s, utcnow() - timedelta(days=1))
        return count

    async def sweep_and_continue(self) -> int:
        """The sweep, after this worker went on with every turn it can take over."""
        def candidates() -> list[str]:
            with self.db.session() as s:
                return takeover.continuable(s)
        for turn_id in await anyio.to_thread.run_sync(candidates):
            if self.running(turn_id) is None:
                await self.continue_turn(turn_id)
        return await anyio.to_thread.run_sync(self.sweep)

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
        stream calls this when the server shuts down — from SIGTERM on; a turn launched after the first
        call is closed by `launch`.) The drain's deadline counts from the first call."""
        if not self.closing:
            self.closing = True
            self.closing_at = time.monotonic()
        for runner in self.runners.values():
            runner.log.close()

    async def shutdown(self) -> None:
        """Stop generating; each turn saves itself `suspended` where it can be continued (`TurnRunner._finish`),
        else with what it has, interrupted. Those not saved `drain_seconds` after the drain began (their
        saves queued behind slow checkpoint writes, a loaded machine) are written `suspended` here, all in
        one transaction, in a thread of their own: left `running`, their worker gone, they would be taken
        over from the last checkpoint, behind the text their readers hold. (Open requests had until
        `graceful_seconds`, uvicorn's window, before this runs: with no stream to start the clock, that
        long is assumed gone.)"""
        if not self.closing:
            self.close_readers()
            self.closing_at -= self.graceful_seconds
        for runner in list(self.runners.values()):
            runner.stop(SHUTDOWN)
        if self._tasks:
            left = self.closing_at + self.drain_seconds - time.monotonic()
            await asyncio.wait(set(self._tasks), timeout=max(left, 0.0))
        if late := [r for r in self.runners.values() if r.task is not None and not r.task.done() and r.suspends]:
            log.warning("the drain's deadline passed with %d turns unsaved: suspending them together", len(late))
            batch = [r.suspension() for r in late]
            for runner in late:
                runner.log.seal()
            try:
                saved = await anyio.to_thread.run_sync(self.saves.suspend_now, batch,
                                                       limiter=anyio.CapacityLimiter(1))
            except Exception:
                log.exception("suspending %d turns at the drain's deadline failed", len(batch))
                saved = set()
            for runner, suspension in zip(late, batch, strict=True):
                if suspension.turn_id in saved and suspension.frames:
                    runner.log.mark_saved(suspension.frames[-1].id)
        if self._watcher is not None:
            self._watcher.cancel()
