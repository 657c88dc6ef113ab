"""The per-user limits on what a user's requests may cost; each refusal is a 429 with `Retry-After`.

    streams   chat turns running at once: the user's conversations holding a live turn lease
              (`backend/chat/turns.py`), so every worker sees the same count; screenings likewise, by
              the patients holding a live screening lease, against the same cap
    rates     chat turns, AI column runs and screenings per minute: `limits`' fixed window over
              `DatabaseStorage`
    budget    tokens per UTC day: `daily_usage`, added to by `record_usage` when a turn or a screening
              is saved

All are checked before a stream starts. The stream count and the window are read just before the
turn claims its conversation, not in the same statement, so two sends racing within milliseconds can
both pass a full stream cap; the per-minute window (one atomic upsert) still bounds such bursts. The
budget is read at the start of a turn: the turn that crosses it finishes, the next one is refused.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, time, timedelta
from typing import Any

import anyio
from limits import RateLimitItem, RateLimitItemPerMinute
from limits.strategies import FixedWindowRateLimiter
from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session

from backend.config import Settings
from backend.db.base import table_of, utcnow
from backend.db.models import Conversation, DailyUsage, Patient
from backend.db.session import Database
from backend.errors import TooManyRequests
from backend.quotas.storage import DatabaseStorage, upsert_of

STREAM_RETRY_SECONDS = 5  # a running answer usually ends within seconds; then a slot is free
TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


class Quotas:
    """Built once per app from its settings; a limit set to 0 is off."""

    def __init__(self, db: Database, settings: Settings) -> None:
        self.db = db
        self.max_streams = settings.max_concurrent_streams
        self.daily_budget = settings.daily_token_budget
        self.limiter = FixedWindowRateLimiter(DatabaseStorage(db))
        self.turn_rate = _per_minute(settings.turns_per_minute)
        self.column_rate = _per_minute(settings.ai_column_runs_per_minute)
        self.screening_rate = _per_minute(settings.screenings_per_minute)

    async def admit_ai_column_run(self, user_id: int) -> None:
        """Raise TooManyRequests unless the user may start an AI column run now (and count it)."""
        await anyio.to_thread.run_sync(self._hit, self.column_rate, "ai-column-runs", user_id,
                                       "AI column runs")

    def admit_turn(self, user_id: int) -> None:
        """Raise TooManyRequests unless the user may start a chat turn now (and count it). Blocking: the
        chat route runs it in the thread that begins the turn."""
        self._admit(user_id, running_turns, "You already have {n} answers being written (the limit is {limit} at "
                    "once). Wait for one to finish or stop it, then send again.", self.turn_rate, "chat-turns",
                    "messages")

    def admit_screening(self, user_id: int) -> None:
        """Raise TooManyRequests unless the user may start a screening now (and count it). Blocking."""
        self._admit(user_id, running_screenings, "You already have {n} screenings running (the limit is {limit} "
                    "at once). Wait for one to finish or stop it, then start again.", self.screening_rate,
                    "screenings", "screenings")

    def _admit(self, user_id: int, running: Callable[[Session, int], int], busy: str, rate: RateLimitItem | None,
               name: str, what: str) -> None:
        with self.db.session() as s:
            if self.max_streams and (n := running(s, user_id)) >= self.max_streams:
                raise TooManyRequests(busy.format(n=n, limit=self.max_streams), STREAM_RETRY_SECONDS)
            self.check_budget(s, user_id)
        self._hit(rate, name, user_id, what)

    def check_budget(self, s: Session, user_id: int) -> None:
        """Raise TooManyRequests when the user has spent today's token budget."""
        if not self.daily_budget:
            return
        spent = tokens_used_today(s, user_id)
        if spent >= self.daily_budget:
            reset = datetime.combine(utcnow().date() + timedelta(days=1), time.min, tzinfo=UTC)
            wait = int((reset - utcnow()).total_seconds()) + 1
            raise TooManyRequests(
                f"You have used today's token budget ({spent:,} of {self.daily_budget:,} tokens). "
                f"It resets at 00:00 UTC, in {_duration(wait)}.", wait)

    def _hit(self, item: RateLimitItem | None, name: str, user_id: int, what: str) -> None:
        if item is None or self.limiter.hit(item, name, str(user_id)):
            return
        reset_at = self.limiter.get_window_stats(item, name, str(user_id)).reset_time
        wait = max(1, int(reset_at - datetime.now(UTC).timestamp()) + 1)
        raise TooManyRequests(f"Too many {what}: at most {item.amount} a minute. "
                              f"Try again in {_duration(wait)}.", wait)


def running_turns(s: Session, user_id: int) -> int:
    """The user's conversations whose turn lease is live (on any worker)."""
    return int(s.scalar(select(func.count()).select_from(Conversation).where(
        Conversation.user_id == user_id, Conversation.active_turn_id.is_not(None),
        Conversation.active_turn_expires_at > utcnow())) or 0)


def running_screenings(s: Session, user_id: int) -> int:
    """The user's patients whose screening lease is live (on any worker)."""
    return int(s.scalar(select(func.count()).select_from(Patient).where(
        Patient.user_id == user_id, Patient.active_screening_id.is_not(None),
        Patient.active_expires_at > utcnow())) or 0)


def tokens_used_today(s: Session, user_id: int) -> int:
    """Every token the model read or wrote for the user's turns since 00:00 UTC (one row)."""
    row = s.get(DailyUsage, (user_id, utcnow().date()))
    return sum(getattr(row, f) for f in TOKEN_FIELDS) if row else 0


def record_usage(s: Session, user_id: int, usage: Mapping[str, Any], turns: int = 1) -> None:
    """Add a saved turn's usage to the user's row for today (one upsert, safe across workers); `turns`
    is what it adds to the day's count (a screening is one; a profile extraction none)."""
    counts = {f: int(usage.get(f) or 0) for f in TOKEN_FIELDS}
    s.execute(_usage_upsert(s.get_bind().dialect.name),
              {"b_user": user_id, "b_day": utcnow().date(), "b_turns": turns,
               **{f"b_{f}": n for f, n in counts.items()}})


@functools.cache
def _usage_upsert(dialect: str) -> Any:
    """The upsert, built once per dialect with its values as parameters: built for every turn, it was over
    a third of the final save's time holding the interpreter (py-spy `--gil`, 200 streams)."""
    table = table_of(DailyUsage)
    stmt = upsert_of(dialect)(table).values(
        user_id=bindparam("b_user"), day=bindparam("b_day"), turns=bindparam("b_turns"),
        **{f: bindparam(f"b_{f}") for f in TOKEN_FIELDS})
    return stmt.on_conflict_do_update(
        index_elements=[table.c.user_id, table.c.day],
        set_={"turns": table.c.turns + bindparam("b_turns"),
              **{f: table.c[f] + bindparam(f"b_{f}") for f in TOKEN_FIELDS}})


def _per_minute(amount: int) -> RateLimitItem | None:
    return RateLimitItemPerMinute(amount) if amount else None


def _duration(seconds: int) -> str:
    if seconds < 90:
        return f"{seconds} s"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"
