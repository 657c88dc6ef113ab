"""One running screening: the engine's events in, stored rows and the screening's event log out.

Two tasks per screening. The *producer* iterates the engine's `screen(...)` and queues what it yields;
the *recorder* saves each event (one short session in a thread) and only then appends it to the log
that readers follow, so every event a reader saw is stored with the same id. Stop, a shutdown and a
deletion cancel the producer only (the engine then cancels its pending model calls); the recorder still
saves what was already judged and writes the terminal event. An HTTP response is just a reader of the
log: a client that leaves stops nothing.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TypeVar

import anyio
from sqlalchemy.orm import Session

from backend.agent.schemas import WireEvent
from backend.chat.log import TurnLog
from backend.db.models import Screening
from backend.db.session import Database
from backend.screening import store
from backend.screening.models import (
    CandidatesEvent,
    DoneEvent,
    ErrorEvent,
    ProfileEvent,
    ScreeningEvent,
    TrialEvent,
    Usage,
)
from backend.screening.schemas import (
    ScreeningCandidates,
    ScreeningCompleted,
    ScreeningError,
    ScreeningFailed,
    ScreeningProfile,
    ScreeningUsage,
    TrialFailed,
    TrialScreened,
)
from backend.screening.store import StopReason

log = logging.getLogger(__name__)
T = TypeVar("T")

ENDED_EARLY = ScreeningError(message="The screening ended without a result; the trials screened so far are kept.",
                             code="internal_error")
DELETED = ScreeningError(message="The screening was deleted.", code="deleted")
SAVE_FAILED = ScreeningError(message="The screening could not be saved; the trials saved so far are kept.",
                             code="internal_error", retryable=True)


@dataclass
class Run:
    """A screening running on this worker: its log (what readers follow) and its two tasks."""

    screening_id: int
    patient_id: int
    user_id: int
    version_id: int
    model: str
    log: TurnLog
    stop_reason: StopReason | None = None
    producer: asyncio.Task[None] | None = None
    task: asyncio.Task[None] | None = None
    usage: Usage | None = None  # the engine's so far (cumulative), from its latest trial, error or done event

    def stop(self, reason: StopReason) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason
        if self.producer is not None:
            self.producer.cancel()


_END = object()


async def produce(events: AsyncIterator[ScreeningEvent], queue: asyncio.Queue[object]) -> None:
    """Queue the engine's events until it ends, fails or this task is cancelled (the recorder learns
    that it ended from the task itself, which also covers a task cancelled before it began)."""
    try:
        async for event in events:
            queue.put_nowait(event)
    except asyncio.CancelledError:
        pass  # stopped: the engine has cancelled its calls; what it yielded is queued
    except Exception as exc:
        queue.put_nowait(exc)


async def record(db: Database, run: Run, events: AsyncIterator[ScreeningEvent]) -> None:
    """Save and publish the run's events until its terminal one; always ends the screening."""
    queue: asyncio.Queue[object] = asyncio.Queue()
    run.producer = asyncio.create_task(produce(events, queue), name=f"screening-{run.screening_id}")
    run.producer.add_done_callback(lambda _task: queue.put_nowait(_END))
    ended = False
    try:
        while not ended:
            item = await queue.get()
            if item is _END:
                break
            if isinstance(item, Exception):
                _log_crash(run, item)
                continue
            ended = await _publish(db, run, item)  # type: ignore[arg-type]
        if not ended:
            await _end_early(db, run)
    except Exception as exc:  # a save failed (the screening was deleted, or the database is gone)
        if run.stop_reason not in ("deleted", "lost"):
            _log_crash(run, exc)
            try:
                await _end(db, run, "failed", ScreeningFailed(**SAVE_FAILED.model_dump()), error=SAVE_FAILED)
            except Exception:
                log.warning("screening %s: its end could not be saved either", run.screening_id)
    finally:
        run.producer.cancel()
        with anyio.CancelScope(shield=True):
            await asyncio.gather(run.producer, return_exceptions=True)
        run.log.finish()


async def _publish(db: Database, run: Run, event: ScreeningEvent) -> bool:
    """Store one engine event and append it to the log; True when it ended the screening."""
    sid = run.screening_id
    if isinstance(event, ProfileEvent):
        await _save(db, run, ScreeningProfile(screening_id=sid, patient_id=run.patient_id, version_id=run.version_id,
                                              profile=event.profile, sentences=event.sentences,
                                              extracted=event.extracted))
    elif isinstance(event, CandidatesEvent):
        await _save(db, run, ScreeningCandidates(mode=event.mode, candidates=event.candidates,
                                                 tool_calls=event.tool_calls, missing=event.missing))
    elif isinstance(event, TrialEvent):
        run.usage = event.usage
        wire = TrialScreened(trial=event.trial, done=event.done, total=event.total)
        frame = run.log.peek_next(wire)
        usage = usage_of(run)

        def save(s: Session) -> None:
            store.save_trial(s, sid, frame.id, event.trial, event.done, event.total)
            _charge(s, sid, usage)

        await in_session(db, save, shield=True)
        run.log.append(wire)
    elif isinstance(event, ErrorEvent) and not event.fatal:
        run.usage = event.usage
        await _save(db, run, TrialFailed(nct_id=event.nct_id, code=event.code, message=event.message,
                                         retryable=event.retryable), usage=usage_of(run))
    elif isinstance(event, ErrorEvent):
        run.usage = event.usage
        error = ScreeningError(message=event.message, code=event.code, retryable=event.retryable)
        await _end(db, run, "failed", ScreeningFailed(**error.model_dump()), error=error)
        return True
    elif isinstance(event, DoneEvent):
        run.usage = event.usage
        await _end(db, run, "complete", ScreeningCompleted(screening_id=sid, status="complete",
                                                           ranking=event.ranking, usage=usage_of(run)))
        return True
    return False


async def _end_early(db: Database, run: Run) -> None:
    """The engine stopped without a terminal event: Stop, a shutdown, a deletion, or a bug."""
    if run.stop_reason in ("deleted", "lost"):  # nothing (more) to store: its readers alone are told
        gone = DELETED if run.stop_reason == "deleted" else store.INTERRUPTED
        run.log.append(ScreeningFailed(**gone.model_dump()))
        return
    if run.stop_reason == "stopped":
        ranking = await in_session(db, lambda s: store.ranking_so_far(s, run.screening_id), shield=True)
        await _end(db, run, "stopped", ScreeningCompleted(screening_id=run.screening_id, status="stopped",
                                                          ranking=ranking, usage=usage_of(run)))
    elif run.stop_reason == "shutdown":
        await _end(db, run, "interrupted", ScreeningFailed(**store.INTERRUPTED.model_dump()),
                   error=store.INTERRUPTED)
    else:
        await _end(db, run, "failed", ScreeningFailed(**ENDED_EARLY.model_dump()), error=ENDED_EARLY)


async def _save(db: Database, run: Run, wire: WireEvent, usage: ScreeningUsage | None = None) -> None:
    frame = run.log.peek_next(wire)

    def save(s: Session) -> None:
        store.save_event(s, run.screening_id, frame)
        if usage is not None:
            _charge(s, run.screening_id, usage)

    await in_session(db, save, shield=True)
    run.log.append(wire)


def _charge(s: Session, screening_id: int, usage: ScreeningUsage) -> None:
    screening = s.get(Screening, screening_id)
    if screening is not None:
        store.charge(s, screening, usage)


async def _end(db: Database, run: Run, status: str, last: WireEvent, error: ScreeningError | None = None) -> None:
    frame = run.log.peek_next(last)
    usage = usage_of(run)

    def end(s: Session) -> None:
        screening = s.get(Screening, run.screening_id)
        if screening is not None:
            store.finish(s, screening, status, frame, usage=usage, error=error)

    await in_session(db, end, shield=True)
    run.log.append(last)


def usage_of(run: Run) -> ScreeningUsage:
    """The engine's usage in the API's terms: `input_tokens` without the cache reads, as the Messages
    API counts them (the engine's total includes them)."""
    u = run.usage
    if u is None:
        return ScreeningUsage(model=run.model)
    return ScreeningUsage(model=u.model or run.model, input_tokens=max(0, u.input_tokens - u.cache_read_tokens),
                          output_tokens=u.output_tokens, cache_read_input_tokens=u.cache_read_tokens,
                          estimated_cost_usd=u.estimated_cost_usd)


async def in_session(db: Database, work: Callable[[Session], T], *, shield: bool = False) -> T:
    """`work` in one short session, in a thread: the event loop never waits on the database. `shield`: a
    save begun is finished even when its task is cancelled (a run's saves: their event is then published)."""
    def run() -> T:
        with db.session() as s:
            return work(s)

    with anyio.CancelScope(shield=shield):
        result = await anyio.to_thread.run_sync(run)
    return result


def _log_crash(run: Run, exc: BaseException) -> None:
    # The type and where, never the message: an exception's text can quote the note.
    where = "".join(traceback.format_tb(exc.__traceback__)[-3:])
    log.error("screening %s failed with %s at\n%s", run.screening_id, type(exc).__name__, where)

