"""Running turns, in the database: which turn owns a conversation now, and whether Stop was asked for.

A turn claims its conversation with one atomic UPDATE (so two workers can't both start a turn in it),
renews a short lease while it streams, and releases it when its answer is saved. A worker that dies
mid-turn leaves a lease that simply expires. Stop from any worker sets `stop_requested`; the turn's
watcher sees it on its next poll. (`updated_at` is kept as it is: bookkeeping is not activity.)
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from backend.db.base import utcnow
from backend.db.models import Conversation

LEASE = timedelta(seconds=60)


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


def poll(s: Session, conversation_id: int, turn_id: str, renew: bool) -> bool:
    """True when Stop was requested for this turn (or the turn lost its conversation)."""
    if renew:
        s.execute(update(Conversation)
                  .where(Conversation.id == conversation_id, Conversation.active_turn_id == turn_id)
                  .values(active_turn_expires_at=utcnow() + LEASE, updated_at=Conversation.updated_at)
                  .execution_options(synchronize_session=False))
    stop = s.scalar(select(Conversation.stop_requested)
                    .where(Conversation.id == conversation_id, Conversation.active_turn_id == turn_id))
    return stop is None or bool(stop)


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
