"""Running turns, in the database: who owns a conversation now, Stop, and turns whose worker is gone.

A turn claims its conversation with one atomic UPDATE (so two workers can't both start a turn in it).
Its worker renews a short lease for all of its running turns in one UPDATE every few seconds, so a
worker that dies (kill -9, a crash, a restart) stops renewing and its turns' leases lapse within
`LEASE`: the conversation is free again, and `interrupt_stale` marks such a turn interrupted, with the
progress it had saved, a history the Messages API accepts, and a terminal event for its readers. Stop
from any worker sets `stop_requested` on a live lease only, so a stale turn is never "stopped".
(`updated_at` is kept as it is: bookkeeping is not activity.)

The lease is the fallback. A turn also names its worker (`chat/workers.py`), whose liveness lock a dead
process can't hold: a turn of a provably dead worker counts as stale at once, so the next turn claims
its conversation without waiting for the lease, and Stop marks it interrupted instead of asking a dead
worker to stop.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, case, delete, or_, select, update
from sqlalchemy.orm import Session

from backend.agent.loop import TurnState
from backend.agent.schemas import MessageExtras, TurnError, TurnErrored
from backend.chat.workers import WorkerPresence
from backend.db.base import table_of, utcnow
from backend.db.models import ChatTurn, Conversation, Message, TurnEvent
from backend.quotas import record_usage

LEASE = timedelta(seconds=10)
MAX_CONTINUATIONS = 2  # times a turn may be taken over by another worker (chat/runner.py: from_checkpoint)
RENEW_EVERY = timedelta(seconds=2)
INTERRUPTED = TurnError(message="The answer was interrupted (the server stopped while answering); what was "
                                "written so far is kept. Ask again to continue.", code="interrupted",
                      retryable=True)


def claim(s: Session, conversation_id: int, turn_id: str, workers: WorkerPresence | None = None) -> bool:
    """Take the conversation for `turn_id`: free, its lease lapsed, or its turn's worker provably dead
    (that turn is interrupted first, keeping its progress)."""
    if _take(s, conversation_id, turn_id):
        return True
    return workers is not None and interrupt_stale(s, conversation_id, workers=workers) > 0 and _take(
        s, conversation_id, turn_id)


def lease(turn_id: str, now: datetime | None = None) -> dict[str, Any]:
    """A conversation's columns while `turn_id` holds it (a new conversation is made with them: taken)."""
    return {"active_turn_id": turn_id, "active_turn_expires_at": (now or utcnow()) + LEASE, "stop_requested": False}


def _take(s: Session, conversation_id: int, turn_id: str) -> bool:
    now = utcnow()
    result = s.execute(
        update(Conversation)
        .where(Conversation.id == conversation_id,
               or_(Conversation.active_turn_id.is_(None), Conversation.active_turn_expires_at < now))
        .values(**lease(turn_id, now), updated_at=Conversation.updated_at)
        .execution_options(synchronize_session=False))
    return result.rowcount == 1  # type: ignore[attr-defined]


def renew_and_poll(s: Session, leases: Mapping[int, str], renew: bool) -> set[int]:
    """For this worker's running turns ({conversation_id: turn_id}): renew their leases (when `renew`)
    and return the conversations whose turn should stop (Stop asked, or the turn lost its lease)."""
    if not leases:
        return set()
    if renew:
        s.execute(update(Conversation)
                  .where(Conversation.id.in_(list(leases)), Conversation.active_turn_id.in_(list(leases.values())))
                  .values(active_turn_expires_at=utcnow() + LEASE, updated_at=Conversation.updated_at)
                  .execution_options(synchronize_session=False))
    rows = s.execute(select(Conversation.id, Conversation.active_turn_id, Conversation.stop_requested)
                     .where(Conversation.id.in_(list(leases))))
    alive = {cid: (turn_id, stop) for cid, turn_id, stop in rows}
    return {cid for cid, turn_id in leases.items()
            if cid not in alive or alive[cid][0] != turn_id or alive[cid][1]}


def end(s: Session, conversation_id: int, turn_id: str) -> bool:
    """A turn's end on its conversation, in one UPDATE: touched, and its lease released if the turn still
    holds it (SET reads the row as it was). False when the conversation is gone (deleted mid-turn)."""
    result = s.execute(_END, {"b_conversation": conversation_id, "b_turn": turn_id, "b_now": utcnow()})
    return result.rowcount == 1  # type: ignore[attr-defined]


def _end() -> Any:
    """`end`'s statement, built once on the table with its values as parameters (once per turn, built
    and cache-keyed each time it was 170 µs of a turn's final save)."""
    table = table_of(Conversation)
    holds = table.c.active_turn_id == bindparam("b_turn")
    return (update(table).where(table.c.id == bindparam("b_conversation"))
            .values(updated_at=bindparam("b_now"),
                    active_turn_id=case((holds, None), else_=table.c.active_turn_id),
                    active_turn_expires_at=case((holds, None), else_=table.c.active_turn_expires_at),
                    stop_requested=case((holds, False), else_=table.c.stop_requested)))


_END = _end()


def release(conv: Conversation, turn_id: str) -> None:
    if conv.active_turn_id == turn_id:
        conv.active_turn_id = None
        conv.active_turn_expires_at = None
        conv.stop_requested = False


def request_stop(s: Session, user_id: int, conversation_id: int) -> bool:
    result = s.execute(
        update(Conversation)
        .where(Conversation.id == conversation_id, Conversation.user_id == user_id,
               Conversation.active_turn_id.is_not(None), Conversation.active_turn_expires_at > utcnow())
        .values(stop_requested=True, updated_at=Conversation.updated_at)
        .execution_options(synchronize_session=False))
    return result.rowcount == 1  # type: ignore[attr-defined]


def stop_dead(s: Session, user_id: int, conversation_id: int, workers: WorkerPresence) -> bool:
    """Stop for a turn whose worker is gone (or whose lease lapsed): nothing can ask it to stop, so it is
    marked interrupted here, with what it had saved. True when there was such a turn."""
    if s.scalar(select(Conversation.id).where(Conversation.id == conversation_id,
                                              Conversation.user_id == user_id)) is None:
        return False
    return interrupt_stale(s, conversation_id, workers=workers) > 0


def by_key(s: Session, user_id: int, key: str) -> ChatTurn | None:
    return s.scalar(select(ChatTurn).where(ChatTurn.user_id == user_id, ChatTurn.idempotency_key == key))


def latest(s: Session, conversation_id: int) -> ChatTurn | None:
    return s.scalar(select(ChatTurn).where(ChatTurn.conversation_id == conversation_id)
                    .order_by(ChatTurn.created_at.desc()).limit(1))


def interrupt_stale(s: Session, conversation_id: int | None = None, now: datetime | None = None,
                    workers: WorkerPresence | None = None) -> int:
    """Mark turns that still say `running` but whose worker no longer holds their lease, or is provably
    dead (`workers`), as interrupted. Returns how many. Their assistant message keeps the progress its
    worker saved. Each turn is taken with a conditional UPDATE, so two sweepers never both end it."""
    now = now or utcnow()
    query = (select(ChatTurn, Conversation).join(Conversation, Conversation.id == ChatTurn.conversation_id)
             .where(ChatTurn.status.in_(("running", "suspended"))))
    if conversation_id is not None:
        query = query.where(ChatTurn.conversation_id == conversation_id)
    found = s.execute(query).all()
    dead = workers.dead(s, {turn.worker_id for turn, _ in found}) if workers is not None and found else set()
    count = 0
    for turn, conv in found:
        lapsed = (conv.active_turn_id != turn.id or conv.active_turn_expires_at is None
                  or conv.active_turn_expires_at < now)
        if not (turn.status == "suspended" or lapsed or turn.worker_id in dead):
            continue
        seq = s.scalar(update(ChatTurn).where(ChatTurn.id == turn.id, ChatTurn.status == turn.status)
                       .values(status="interrupted", last_event_id=ChatTurn.last_event_id + 1)
                       .returning(ChatTurn.last_event_id).execution_options(synchronize_session=False))
        if seq is None:
            continue  # another worker ended it meanwhile
        count += 1
        message = s.get(Message, turn.assistant_message_id) if turn.assistant_message_id else None
        if message is not None and message.status == "running":
            extras = MessageExtras.model_validate(message.extras or {})
            saved = turn.resume_state or {}
            if "through" in saved and (tail := text_after(s, turn.id, saved["through"])):
                message.content += tail  # what its readers were sent after its last whole checkpoint
                extras = extras.model_copy(update={"blocks": caught_up(saved, tail).history()})
            message.extras = extras.model_copy(update={"error": INTERRUPTED}).model_dump(mode="json")
            message.status = "interrupted"
            if extras.usage is not None:  # what the dead worker's turn had used, as of its last checkpoint
                record_usage(s, turn.user_id, extras.usage.model_dump(), extras.model or "unrecorded")
        terminal = TurnErrored(message=INTERRUPTED.message, code=INTERRUPTED.code, retryable=INTERRUPTED.retryable,
                               conversation_id=conv.id, message_id=turn.assistant_message_id)
        s.add(TurnEvent(turn_id=turn.id, seq=seq, type=terminal.type, data=terminal.to_data()))
        if conv.active_turn_id == turn.id:
            release(conv, turn.id)
    return count


def text_after(s: Session, turn_id: str, through: int) -> str:
    """The text a turn's readers were sent after event `through`. A checkpoint writes the answer, its
    blocks and the resume state only now and then (`TurnRunner.progress`), its events always: this is
    what they are missing when the turn's worker is gone."""
    return "".join(data.get("text", "") for data in s.scalars(
        select(TurnEvent.data).where(TurnEvent.turn_id == turn_id, TurnEvent.seq > through,
                                     TurnEvent.type == "text_delta").order_by(TurnEvent.seq)))


def caught_up(saved: dict[str, Any], tail: str) -> TurnState:
    """The saved state of a turn with the text written since it (between two whole checkpoints nothing
    but the streaming text changes). The tail is the text as shown: a marker in it is not in it."""
    return TurnState(messages=saved.get("messages", []), text=saved.get("text", ""),
                     partial_text=saved.get("partial_text", "") + tail)


def continuable(saved: dict[str, Any] | None) -> bool:
    """Whether a turn can go on from its saved state: before its first answer, mid-text, or with its
    tool calls all answered. Not mid-tool (a tool's effects can't be replayed safely) nor after its last
    model call ended (there is nothing to continue)."""
    if saved is None:
        return False
    messages = saved.get("messages") or []
    return not messages or messages[-1]["role"] == "user"


def take_over(s: Session, turn_id: str, workers: WorkerPresence) -> ChatTurn | None:
    """Claim a turn another worker left, for this worker to go on with it: one that worker `suspended` at
    shutdown, or one still `running` whose worker is provably dead — if its saved state is continuable,
    it was taken over fewer than `MAX_CONTINUATIONS` times, and no newer turn has its conversation.
    Conditional UPDATEs make it one winner among racing readers and sweeps. None when not taken."""
    record = s.get(ChatTurn, turn_id)
    if (record is None or not workers.held or record.continued >= MAX_CONTINUATIONS
            or not continuable(record.resume_state)):
        return None
    if record.status != "suspended" and not (
            record.status == "running" and record.worker_id in workers.dead(s, [record.worker_id])):
        return None
    now = utcnow()
    conv = s.execute(
        update(Conversation)
        .where(Conversation.id == record.conversation_id,
               or_(Conversation.active_turn_id.is_(None), Conversation.active_turn_id == turn_id,
                   Conversation.active_turn_expires_at < now))
        .values(active_turn_id=turn_id, active_turn_expires_at=now + LEASE, stop_requested=False,
                updated_at=Conversation.updated_at)
        .execution_options(synchronize_session=False))
    if conv.rowcount != 1:  # type: ignore[attr-defined]
        return None
    won = s.execute(
        update(ChatTurn)
        .where(ChatTurn.id == turn_id, ChatTurn.status == record.status, ChatTurn.continued == record.continued)
        .values(status="running", worker_id=workers.id, continued=record.continued + 1)
        .execution_options(synchronize_session=False))
    if won.rowcount != 1:  # type: ignore[attr-defined]
        s.rollback()
        return None
    s.refresh(record)
    return record


def purge_events(s: Session, older_than: datetime) -> None:
    """Finished turns keep their events for replays (resume, idempotent resubmits) for a while only."""
    old = select(ChatTurn.id).where(ChatTurn.status != "running", ChatTurn.updated_at < older_than)
    s.execute(delete(TurnEvent).where(TurnEvent.turn_id.in_(old)))
