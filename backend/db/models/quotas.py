"""Per-user quota bookkeeping shared by every worker (see `backend/quotas`).

`RateLimitCounter` is the storage behind the `limits` library's fixed-window limiter: one row per
limit and user, reset in place when its window has passed, so the table never grows beyond that.
`DailyUsage` is the tokens a user's turns used per UTC day, added to when a turn's answer is saved:
the daily budget reads one row, and deleting a conversation does not give its tokens back.
`ModelUsage` is the same per model too, for the admin usage page (`backend/observability/usage.py`).
`UpstreamLimit` is the next free request slot of a rate-limited upstream API, shared by every instance
(`backend/sources/shared_limit.py`).
"""

from __future__ import annotations

from datetime import date

from sqlalchemy import BigInteger, Date, Float, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from backend.db.base import Base


class RateLimitCounter(Base):
    __tablename__ = "rate_limit_counters"

    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    count: Mapped[int] = mapped_column(Integer, default=0)
    expires_at: Mapped[float] = mapped_column(Float)  # epoch seconds, as `limits` counts time


class UsageCounts:
    """What a usage row counts. `record_usage` adds the same figures to a user's day and to its model's
    share of that day, so both tables count them alike."""

    turns: Mapped[int] = mapped_column(Integer, default=0)
    input_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    output_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    cache_creation_input_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    cache_read_input_tokens: Mapped[int] = mapped_column(BigInteger, default=0)


class DailyUsage(UsageCounts, Base):
    __tablename__ = "daily_usage"

    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)  # UTC


class ModelUsage(UsageCounts, Base):
    __tablename__ = "model_usage"

    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True, index=True)  # UTC
    model: Mapped[str] = mapped_column(String(100), primary_key=True)  # the API id ("unrecorded" before 0015)


class UpstreamLimit(Base):
    __tablename__ = "upstream_limits"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    next_slot: Mapped[float] = mapped_column(Float)  # epoch seconds, by the database's clock
