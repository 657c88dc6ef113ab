"""Chat turns and their event logs: what makes an answer outlive its HTTP connection.

A `ChatTurn` is one send: its idempotency key (one send = one turn), its status, and the ids of its user
and assistant messages. `TurnEvent` rows are the turn's streamed events with their SSE ids, written in
batches while it runs, so any worker can replay what a reader missed and follow the rest.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from backend.db.base import Base, UTCDateTime, utcnow


class ChatTurn(Base):
    __tablename__ = "chat_turns"
    __table_args__ = (UniqueConstraint("user_id", "idempotency_key", name="uq_chat_turns_user_key"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)  # the turn_id of the SSE events
    conversation_id: Mapped[int] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    idempotency_key: Mapped[str | None] = mapped_column(String(100), default=None)
    request_hash: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(20), default="running")  # chat/turn.py: TurnStatus, its lifecycle
    user_message_id: Mapped[int | None] = mapped_column(Integer, default=None)
    assistant_message_id: Mapped[int | None] = mapped_column(Integer, default=None)
    last_event_id: Mapped[int] = mapped_column(Integer, default=0)  # the highest id written to turn_events
    worker_id: Mapped[str | None] = mapped_column(String(32), default=None)  # chat/workers.py: whose lock says alive
    resume_state: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)  # chat/turn.py: ResumeState
    continued: Mapped[int] = mapped_column(Integer, default=0)  # times another worker went on with it
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class EventRow:
    """A streamed event kept for replay, as `chat.log.Frame` holds it: `seq` is its SSE id (1, 2, 3… within
    its stream). The table adds the key of the stream it belongs to (a turn, a screening)."""

    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    type: Mapped[str] = mapped_column(String(32))
    data: Mapped[dict[str, Any]] = mapped_column(JSON)


class TurnEvent(EventRow, Base):
    __tablename__ = "turn_events"

    turn_id: Mapped[str] = mapped_column(ForeignKey("chat_turns.id", ondelete="CASCADE"), primary_key=True)
