"""The per-user limits on what a user's requests may cost; each refusal is a 429 with `Retry-After`.

    streams   chat turns running at once: the user's conversations holding a live turn lease
              (`backend/chat/turns.py`), counted in the transaction that claims one (`streams.py`), so
              simultaneous sends on any worker cannot pass the cap together; screenings likewise, by the
              patients holding a live screening lease, against the same cap (counted before they start)
    rates     per minute, `limits`' fixed window over `DatabaseStorage`: chat turns, AI column runs and
              their rows, screenings, searches and statistics, exports and reports
    budget    tokens per UTC day: `daily_usage`, added to by `record_usage` when a turn is saved, as a
              screening goes, and by `spend` after any other model call (an AI column's rows)
    runs      AI column runs at once per user, in this worker (`ai_column_slot`)

All are checked before a stream starts. The budget is read at the start of a turn or a run: the one
that crosses it finishes, the next one is refused.

Any feature that calls the model outside a chat turn does two things (both blocking, run them in a thread):

    quotas.check_budget(user_id)      # before it starts: TooManyRequests when today's budget is spent
    quotas.spend(user_id, usage)      # after each call: its input/output (and cache) tokens
"""

from __future__ import annotations

import functools
import threading
from collections import Counter
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
from backend.db.models import DailyUsage, ModelUsage, Patient
from backend.db.session import Database
from backend.errors import TooManyRequests
from backend.observability.observe import quota_refused
from backend.quotas.storage import DatabaseStorage, upsert_of
from backend.quotas.streams import STREAM_RETRY_SECONDS, admit_stream

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
        self.column_row_rate = _per_minute(settings.ai_column_rows_per_minute)
        self.search_rate = _per_minute(settings.searches_per_minute)
        self.export_rate = _per_minute(settings.exports_per_minute)
        self.screening_rate = _per_minute(settings.screenings_per_minute)
        self.max_column_runs = settings.max_concurrent_ai_column_runs
        self._column_runs: Counter[int] = Counter()  # this worker's running AI column runs, by user
        self._column_runs_lock = threading.Lock()

    async def admit_ai_column_run(self, user_id: int, rows: int) -> ColumnRunSlot:
        """Raise TooManyRequests unless the user may start an AI column run over `rows` rows now: today's
        token budget not spent, under the runs and rows a minute (both counted), fewer runs going at once
        than the cap. The slot returned holds a place under that cap until it is released."""
        slot = self.ai_column_slot(user_id)
        try:
            await anyio.to_thread.run_sync(self._admit_column_run, user_id, rows)
        except BaseException:
            slot.release()
            raise
        return slot

    def _admit_column_run(self, user_id: int, rows: int) -> None:
        self.check_budget(user_id)
        self._hit(self.column_rate, "ai-column-runs", user_id, "AI column runs")
        self._hit(self.column_row_rate, "ai-column-rows", user_id, "AI column rows", cost=rows)

    def ai_column_slot(self, user_id: int) -> ColumnRunSlot:
        with self._column_runs_lock:
            if self.max_column_runs and self._column_runs[user_id] >= self.max_column_runs:
                quota_refused("ai_column_runs")
                raise TooManyRequests(
                    f"You already have {self._column_runs[user_id]} AI columns running (the limit is "
                    f"{self.max_column_runs} at once). Wait for one to finish, then run this one.",
                    STREAM_RETRY_SECONDS)
            self._column_runs[user_id] += 1
        return ColumnRunSlot(self, user_id)

    def _release_column_run(self, user_id: int) -> None:
        with self._column_runs_lock:
            self._column_runs[user_id] -= 1
            if self._column_runs[user_id] <= 0:
                del self._column_runs[user_id]

    async def admit_search(self, user_id: int) -> None:
        """Raise TooManyRequests past the user's searches and statistics a minute (and count this one)."""
        await anyio.to_thread.run_sync(self._hit, self.search_rate, "searches", user_id, "searches")

    async def admit_export(self, user_id: int) -> None:
        """Raise TooManyRequests past the user's exports and reports a minute (and count this one)."""
        await anyio.to_thread.run_sync(self._hit, self.export_rate, "exports", user_id, "exports and reports")

    def admit_turn(self, user_id: int) -> None:
        """Raise TooManyRequests unless the user may start a chat turn now (and count it). Blocking: the
        chat route runs it in the thread that begins the turn. The stream cap is `admit_stream`, checked
        where the turn claims its conversation."""
        self.check_budget(user_id)
        self._hit(self.turn_rate, "chat-turns", user_id, "messages")

    def admit_screening(self, user_id: int) -> None:
        """Raise TooManyRequests unless the user may start a screening now (and count it). Blocking."""
        if self.max_streams:
            with self.db.session() as s:
                running = running_screenings(s, user_id)
            if running >= self.max_streams:
                quota_refused("screenings")
                raise TooManyRequests(
                    f"You already have {running} screenings running (the limit is {self.max_streams} at once). "
                    "Wait for one to finish or stop it, then start again.", STREAM_RETRY_SECONDS)
        self.check_budget(user_id)
        self._hit(self.screening_rate, "screenings", user_id, "screenings")

    def admit_stream(self, s: Session, user_id: int) -> None:
        """The stream cap, in the transaction that has just claimed a conversation for the user's turn."""
        admit_stream(s, user_id, self.max_streams)

    def check_budget(self, user_id: int) -> None:
        """TooManyRequests when the user has spent today's token budget. Blocking."""
        if not self.daily_budget:
            return
        with self.db.session() as s:
            spent = tokens_used_today(s, user_id)
        if spent >= self.daily_budget:
            quota_refused("daily_tokens")
            reset = datetime.combine(utcnow().date() + timedelta(days=1), time.min, tzinfo=UTC)
            wait = int((reset - utcnow()).total_seconds()) + 1
            raise TooManyRequests(
                f"You have used today's token budget ({spent:,} of {self.daily_budget:,} tokens). "
                f"It resets at 00:00 UTC, in {_duration(wait)}.", wait)

    def spend(self, user_id: int, usage: Mapping[str, Any]) -> None:
        """Add one model call's tokens to the user's day (not a turn). Blocking."""
        with self.db.session() as s:
            record_usage(s, user_id, usage, turns=0)

    def _hit(self, item: RateLimitItem | None, name: str, user_id: int, what: str, cost: int = 1) -> None:
        if item is None:
            return
        # A refused request of many units (rows) must not use up the window for smaller ones after it.
        if (cost == 1 or self.limiter.test(item, name, str(user_id), cost=cost)) and self.limiter.hit(
                item, name, str(user_id), cost=cost):
            return
        quota_refused(name)
        reset_at = self.limiter.get_window_stats(item, name, str(user_id)).reset_time
        wait = max(1, int(reset_at - datetime.now(UTC).timestamp()) + 1)
        asked = f" ({cost:,} asked)" if cost > 1 else ""
        raise TooManyRequests(f"Too many {what}: at most {item.amount:,} a minute{asked}. "
                              f"Try again in {_duration(wait)}.", wait)


class ColumnRunSlot:
    """A running AI column's place under the per-user cap; `release` is idempotent."""

    def __init__(self, quotas: Quotas, user_id: int) -> None:
        self._release: Callable[[], None] | None = functools.partial(quotas._release_column_run, user_id)

    def release(self) -> None:
        release, self._release = self._release, None
        if release is not None:
            release()


def running_screenings(s: Session, user_id: int) -> int:
    """The user's patients whose screening lease is live (on any worker)."""
    return int(s.scalar(select(func.count()).select_from(Patient).where(
        Patient.user_id == user_id, Patient.active_screening_id.is_not(None),
        Patient.active_expires_at > utcnow())) or 0)


def tokens_used_today(s: Session, user_id: int) -> int:
    """Every token the model read or wrote for the user's turns since 00:00 UTC (one row)."""
    row = s.get(DailyUsage, (user_id, utcnow().date()))
    return sum(getattr(row, f) for f in TOKEN_FIELDS) if row else 0


def record_usage(s: Session, user_id: int, usage: Mapping[str, Any], model: str = "unrecorded",
                 turns: int = 1) -> None:
    """Add a saved turn's usage (or, `turns=0`, another model call's) to the user's row for today, and to
    its row for today and `model` (the admin usage page's): one upsert each, safe across workers."""
    counts = {f: int(usage.get(f) or 0) for f in TOKEN_FIELDS}
    params = {"b_user": user_id, "b_day": utcnow().date(), "b_turns": turns,
              **{f"b_{f}": n for f, n in counts.items()}}
    dialect = s.get_bind().dialect.name
    s.execute(_usage_upsert(dialect, DailyUsage), params)
    s.execute(_usage_upsert(dialect, ModelUsage), {**params, "b_model": model[:100]})


@functools.cache
def _usage_upsert(dialect: str, model: type[DailyUsage] | type[ModelUsage]) -> Any:
    """The upsert, built once per dialect and table with its values as parameters: building it is costly,
    and a turn's final save holds the interpreter while it runs."""
    table = table_of(model)
    keys = [table.c.user_id, table.c.day, *([table.c.model] if "model" in table.c else [])]
    stmt = upsert_of(dialect)(table).values(
        user_id=bindparam("b_user"), day=bindparam("b_day"), turns=bindparam("b_turns"),
        **({"model": bindparam("b_model")} if "model" in table.c else {}),
        **{f: bindparam(f"b_{f}") for f in TOKEN_FIELDS})
    return stmt.on_conflict_do_update(
        index_elements=keys,
        set_={"turns": table.c.turns + bindparam("b_turns"),
              **{f: table.c[f] + bindparam(f"b_{f}") for f in TOKEN_FIELDS}})


def _per_minute(amount: int) -> RateLimitItem | None:
    return RateLimitItemPerMinute(amount) if amount else None


def _duration(seconds: int) -> str:
    if seconds < 90:
        return f"{seconds} s"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"
