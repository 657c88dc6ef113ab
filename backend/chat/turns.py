"""Running turns, in the database: who owns a conversation now, Stop, and turns whose worker is gone.

A turn claims its conversation with one atomic UPDATE (so two workers can't both start a turn in it).
Its worker renews a short lease for all of its running turns in one UPDATE every few seconds, so a
worker that dies (kill -9, a crash, a restart) stops renewing and its turns' leases lapse within
`LEASE`: the conversation is free again, and `interrupt_stale` marks such a turn interrupted, with the
progress it had saved, a history the Messages API accepts, and a terminal event for its readers. Stop
from any worker sets `stop_requested` on a live lease only, so a stale turn is never "stopped".
(`updated_at` is kept as it is: bookkeeping is not activity.)
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from sqlalchemy import and_, delete, or_, select, update
from sqlalchemy.orm import Session

from backend.agent.schemas import MessageExtras, TurnError, TurnErrored
from backend.db.base import utcnow
from backend.db.models import ChatTurn, Conversation, Message, TurnEvent
from backend.quotas import record_usage

LEASE = timedelta(seconds=10)
RENEW_EVERY = timedelta(seconds=2)
INTERRUPTED = TurnError(message="The answer was interrupted (the server stopped while answering); what was "
                                "written so far is kept. Ask again to continue.", code="interrupted",
                      retryable=True)


def claim(s: Session, conversation_id: int, turn_id: str) -> bool:
    now = utcnow()
    result = s.execute(
        update(Conversation)
        .where(Conversation.id == conversation_id,
               or_(Conversation.active_turn_id.is_(None), Conversation.active_turn_expires_at < now))
        .values(active_turn_id=turn_id, active_turn_expires_at=now + LEASE, stop_requested=False,
                updated_at=Conversation.updated_at)
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


def by_key(s: Session, user_id: int, key: str) -> ChatTurn | None:
    return s.scalar(select(ChatTurn).where(ChatTurn.user_id == user_id, ChatTurn.idempotency_key == key))


def latest(s: Session, conversation_id: int) -> ChatTurn | None:
    return s.scalar(select(ChatTurn).where(ChatTurn.conversation_id == conversation_id)
                    .order_by(ChatTurn.created_at.desc()).limit(1))


def interrupt_stale(s: Session, conversation_id: int | None = None, now: datetime | None = None) -> int:
    """Mark turns that still say `running` but whose worker no longer holds their lease as interrupted.
    Returns how many. Their assistant message keeps the progress its worker saved."""
    now = now or utcnow()
    lapsed = or_(Conversation.active_turn_id.is_(None), Conversation.active_turn_id != ChatTurn.id,
                 Conversation.active_turn_expires_at < now)
    query = (select(ChatTurn, Conversation).join(Conversation, Conversation.id == ChatTurn.conversation_id)
             .where(and_(ChatTurn.status == "running", lapsed)))
    if conversation_id is not None:
        query = query.where(ChatTurn.conversation_id == conversation_id)
    count = 0
    for turn, conv in s.execute(query).all():
        count += 1
        turn.status = "interrupted"
        message = s.get(Message, turn.assistant_message_id) if turn.assistant_message_id else None
        if message is not None and message.status == "running":
            extras = MessageExtras.model_validate(message.extras or {})
            message.extras = extras.model_copy(update={"error": INTERRUPTED}).model_dump(mode="json")
            message.status = "interrupted"
            if extras.usage is not None:  # what the dead worker's turn had used, as of its last checkpoint
                record_usage(s, turn.user_id, extras.usage.model_dump())
        terminal = TurnErrored(message=INTERRUPTED.message, code=INTERRUPTED.code, retryable=INTERRUPTED.retryable,
                               conversation_id=conv.id, message_id=turn.assistant_message_id)
        turn.last_event_id += 1
        s.add(TurnEvent(turn_id=turn.id, seq=turn.last_event_id, type=terminal.type, data=terminal.to_data()))
        if conv.active_turn_id == turn.id:
            release(conv, turn.id)
    return count


def purge_events(s: Session, older_than: datetime) -> None:
    """Finished turns keep their events for replays (resume, idempotent resubmits) for a while only."""
    old = select(ChatTurn.id).where(ChatTurn.status != "running", ChatTurn.updated_at < older_than)
    s.execute(delete(TurnEvent).where(TurnEvent.turn_id.in_(old)))
