from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from backend.db.base import Base, UTCDateTime, utcnow


class ResearchStream(Base):
    __tablename__ = "research_streams"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str | None] = mapped_column(Text, default=None)
    chat_instructions: Mapped[str | None] = mapped_column(Text, default=None)
    settings: Mapped[dict | None] = mapped_column(JSON, default=None)
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    updated_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, onupdate=utcnow)


class InstructionVersion(Base):
    """Every saved value of a stream's chat_instructions, with who and when. `number` counts 1, 2, 3… within
    its stream (what people read: "v3"); `id` is global and is what the API takes to name a version."""

    __tablename__ = "stream_instruction_versions"
    __table_args__ = (UniqueConstraint("stream_id", "number", name="uq_stream_instruction_versions_stream_number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    stream_id: Mapped[int] = mapped_column(ForeignKey("research_streams.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    chat_instructions: Mapped[str | None] = mapped_column(Text, default=None)
    note: Mapped[str | None] = mapped_column(String(500), default=None)
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
