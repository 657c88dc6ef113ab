"""A turn another worker left, taken over by this one: one that worker `suspended` at shutdown, or one
still `running` whose worker is provably dead (`chat/workers.py`). The sweep and a reader waiting for
such a turn try it; conditional UPDATEs make one of them the winner.
"""

from __future__ import annotations

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from backend.chat.log import RESERVE
from backend.chat.turn import LIVE, ResumeState
from backend.chat.turns import LEASE
from backend.chat.workers import WorkerPresence
from backend.db.base import utcnow
from backend.db.models import ChatTurn, Conversation

MAX_CONTINUATIONS = 2  # times a turn may be taken over by another worker (`take_over`)


def continuable(s: Session) -> list[str]:
    """Live turns that a worker may still take over (the sweep tries each)."""
    return list(s.scalars(select(ChatTurn.id).where(ChatTurn.status.in_(LIVE),
                                                    ChatTurn.continued < MAX_CONTINUATIONS)))


def take_over(s: Session, turn_id: str, workers: WorkerPresence) -> ChatTurn | None:
    """Claim a turn another worker left, for this worker to go on with it: one that worker `suspended` at
    shutdown, or one still `running` whose worker is provably dead — if its saved state is continuable,
    it was taken over fewer than `MAX_CONTINUATIONS` times, and no newer turn has its conversation.
    Conditional UPDATEs make it one winner among racing readers and sweeps. None when not taken."""
    record = s.get(ChatTurn, turn_id)
    saved = ResumeState.load(record.resume_state) if record is not None else None
    if record is None or saved is None or not workers.held or record.continued >= MAX_CONTINUATIONS \
            or not saved.continuable:
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
    # A dead worker's readers may hold ids past its last save (chat/log.py, RESERVE): number after them.
    # A suspended turn saved every event it sent.
    floor = record.last_event_id + (RESERVE if record.status == "running" else 0)
    won = s.execute(
        update(ChatTurn)
        .where(ChatTurn.id == turn_id, ChatTurn.status == record.status, ChatTurn.continued == record.continued)
        .values(status="running", worker_id=workers.id, continued=record.continued + 1, last_event_id=floor)
        .execution_options(synchronize_session=False))
    if won.rowcount != 1:  # type: ignore[attr-defined]
        s.rollback()
        return None
    s.refresh(record)
    return record
