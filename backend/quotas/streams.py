"""The concurrent-stream cap, admitted atomically: simultaneous sends cannot pass it together, on any worker.

`admit_stream` runs in the transaction that has just claimed a conversation for the user's new turn (the
lease written: a new conversation inserted with it, or an existing one's lease taken) and counts the
user's live leases, this one included. Counting before the claim, in another transaction, let every
send of a burst see the same free slots (5 of 5 ran with a cap of 3). Here the count and the claim commit
together, and two of them for one user cannot interleave:

    SQLite      the claim is a write, so this transaction holds the database's one write lock (across
                processes) from it to the commit; its snapshot is the newest (WAL refuses to upgrade a
                stale one), so it sees every claim committed before it, and no other can commit meanwhile
    PostgreSQL  a transaction-scoped advisory lock per user, taken before counting and held to the commit:
                the second of two racing sends counts after the first committed (read committed: each
                statement sees what is committed when it starts)

A refusal raises TooManyRequests; the caller's transaction rolls back, claim included.
"""

from __future__ import annotations

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from backend.db.base import utcnow
from backend.db.models import Conversation
from backend.errors import TooManyRequests
from backend.observability.observe import quota_refused

STREAM_RETRY_SECONDS = 5  # a running answer usually ends within seconds; then a slot is free
_LOCK_SPACE = 0x5354  # the advisory locks' first key: this module's, the user id is the second


def admit_stream(s: Session, user_id: int, limit: int) -> None:
    """TooManyRequests when the user's live turns, the one this transaction just claimed included, exceed
    `limit` (0: no limit)."""
    if not limit:
        return
    if s.get_bind().dialect.name == "postgresql":
        s.execute(text("SELECT pg_advisory_xact_lock(:space, :user_id)"), {"space": _LOCK_SPACE, "user_id": user_id})
    running = running_turns(s, user_id)
    if running > limit:
        quota_refused("streams")
        raise TooManyRequests(
            f"You already have {running - 1} answers being written (the limit is {limit} at once). "
            "Wait for one to finish or stop it, then send again.", STREAM_RETRY_SECONDS)


def running_turns(s: Session, user_id: int) -> int:
    """The user's conversations whose turn lease is live (on any worker)."""
    return int(s.scalar(select(func.count()).select_from(Conversation).where(
        Conversation.user_id == user_id, Conversation.active_turn_id.is_not(None),
        Conversation.active_turn_expires_at > utcnow())) or 0)
