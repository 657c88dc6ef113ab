from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Index, Integer, String, Text, false, true
from sqlalchemy.orm import Mapped, mapped_column, relationship

from backend.db.base import Base, UTCDateTime, utcnow


class Conversation(Base):
    __tablename__ = "conversations"
    __table_args__ = (
        Index("ix_conversations_app", "app"),
        Index("ix_conversations_user_app", "user_id", "app"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    app: Mapped[str] = mapped_column(String(50), default="kh", server_default="kh")
    title: Mapped[str | None] = mapped_column(String(255), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)
    # The turn running now (any worker): a lease renewed while it streams, so a crashed worker's turn
    # expires instead of blocking the conversation; Stop on another worker sets `stop_requested`.
    active_turn_id: Mapped[str | None] = mapped_column(String(32), default=None)
    active_turn_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    stop_requested: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # Per-conversation model settings (backend/conversations/config.py); None: the app's default, so a
    # conversation follows a changed default until someone picks a value for it.
    model: Mapped[str | None] = mapped_column(String(100), default=None)
    max_tokens: Mapped[int | None] = mapped_column(Integer, default=None)
    compaction: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())

    messages: Mapped[list[Message]] = relationship(
        back_populates="conversation", order_by="Message.id", cascade="all, delete-orphan",
        passive_deletes=True,
    )


class Message(Base):
    """One chat message. `extras` holds payloads (with decisions), tool history, suggestions, usage and
    the Anthropic content blocks needed to rebuild the API history (`blocks`)."""

    __tablename__ = "messages"

    id: Mapped[int] = mapped_column(primary_key=True)
    conversation_id: Mapped[int] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"), index=True)
    role: Mapped[str] = mapped_column(String(20))
    content: Mapped[str] = mapped_column(Text, default="")
    context: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    extras: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    status: Mapped[str] = mapped_column(String(20), default="complete")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)

    conversation: Mapped[Conversation] = relationship(back_populates="messages")


class MessageVersion(Base):
    """An earlier version of a conversation's tail: the messages from `position` (how many messages came
    before the fork) to the end, as they were when a regenerate, an edit or a version switch replaced them.
    `conversation.messages` is always the active path, so everything that reads messages sees only it.

    The versions at one fork are numbered 1..n; the active one is the number no archived row holds. A fork
    inside an archived tail belongs to that tail (`parent_id`) and comes back with it; `parent_id` None is a
    fork on the active path."""

    __tablename__ = "message_versions"

    id: Mapped[int] = mapped_column(primary_key=True)
    conversation_id: Mapped[int] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"), index=True)
    parent_id: Mapped[int | None] = mapped_column(
        ForeignKey("message_versions.id", ondelete="CASCADE"), index=True, default=None)
    position: Mapped[int] = mapped_column(Integer)
    version: Mapped[int] = mapped_column(Integer)
    messages: Mapped[list[dict[str, Any]]] = mapped_column(JSON)  # role, content, context, extras, status, created_at
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
