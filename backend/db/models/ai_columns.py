"""Cached AI column results: one model evaluation of one criterion against one table row.

Keyed by (user, criteria hash, column type, app, item id, model), so re-running a column is instant in
every worker process, and one user's results are never served to another (a criterion can carry what the
user is researching; see README "AI columns"). Only usable evaluations are stored: transport/API errors and
unparseable replies are not, so the next run asks the model again.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from backend.db.base import Base, UTCDateTime, utcnow


class AiColumnResult(Base):
    __tablename__ = "ai_column_results"
    __table_args__ = (
        # Also the lookup index: a column run asks for one (user, hash, type, app, model) and many item ids.
        UniqueConstraint("user_id", "criteria_hash", "column_type", "app", "model", "item_id",
                         name="uq_ai_column_results_key"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    criteria_hash: Mapped[str] = mapped_column(String(64))
    column_type: Mapped[str] = mapped_column(String(16))  # boolean | text
    app: Mapped[str] = mapped_column(String(20))  # trialscout | tablizer
    item_id: Mapped[str] = mapped_column(String(32))  # NCT id or PMID, normalized
    model: Mapped[str] = mapped_column(String(100))
    value: Mapped[str | None] = mapped_column(Text, default=None)  # MET/NOT_MET/UNKNOWN, or the text answer
    reasoning: Mapped[str] = mapped_column(Text, default="")
    evidence: Mapped[list[Any]] = mapped_column(JSON, default=list)
    input_tokens: Mapped[int] = mapped_column(Integer, default=0)
    output_tokens: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
