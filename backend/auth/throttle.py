"""Failed sign-ins, counted in the database so every worker process sees the same counts.

Two counters slow a password guesser down: one per account name (typed, whether or not it exists, so
the throttle says nothing about which names are real) and one per client address (so one machine can't
walk through many accounts). Each failure bumps both in one atomic upsert. Once a counter reaches its
limit, that key is locked for `lockout_seconds`, doubling with every further failure up to
`max_lockout_seconds`; while locked, sign-in answers 429 with `Retry-After` and does not check the
password at all, so even the right one is refused. A successful sign-in forgets the account's failures
(not the address's: an attacker's own account must not reset their guessing budget). Counters nobody
has failed on for `forget_after` start again from zero and their rows are pruned.

The client address is the ASGI peer, which uvicorn takes from `X-Forwarded-For` only when started with
`--proxy-headers` and a matching `--forwarded-allow-ips`; behind a proxy without that, every request
shares the proxy's address and the per-address limit applies to everyone together.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import case, delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from backend.config import Settings
from backend.db.base import utcnow
from backend.db.models import LoginFailure
from backend.errors import AppError


class LoginThrottled(AppError):
    status_code = 429
    error = "too_many_requests"

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"Too many failed sign-ins. Try again in {retry_after} seconds.")
        self.retry_after = retry_after


@dataclass(frozen=True)
class LoginPolicy:
    max_per_account: int = 5
    max_per_address: int = 20
    lockout_seconds: int = 30
    max_lockout_seconds: int = 900

    @classmethod
    def from_settings(cls, settings: Settings) -> LoginPolicy:
        return cls(settings.login_max_failures, settings.login_max_failures_per_address,
                   settings.login_lockout_seconds, settings.login_max_lockout_seconds)

    @property
    def forget_after(self) -> timedelta:
        return timedelta(seconds=max(3600, 2 * self.max_lockout_seconds))

    def lockout(self, failures: int, limit: int) -> timedelta | None:
        if failures < limit:
            return None
        doublings = min(failures - limit, 30)
        return timedelta(seconds=min(self.lockout_seconds * 2 ** doublings, self.max_lockout_seconds))


def account_key(username: str) -> str:
    return f"account:{username}"


def address_key(address: str) -> str:
    return f"address:{address}"[:120]


def retry_after(s: Session, keys: list[str], now: datetime | None = None) -> int | None:
    """Seconds until every one of `keys` is unlocked, or None when none is locked."""
    now = now or utcnow()
    until = s.scalar(select(LoginFailure.blocked_until)
                     .where(LoginFailure.key.in_(keys), LoginFailure.blocked_until > now)
                     .order_by(LoginFailure.blocked_until.desc()).limit(1))
    if until is None:
        return None
    return max(1, math.ceil((until - now).total_seconds()))


def record_failure(s: Session, key: str, limit: int, policy: LoginPolicy, now: datetime | None = None) -> int:
    """Count one failure against `key` (atomically, whichever worker races us) and lock it past `limit`."""
    now = now or utcnow()
    stale = now - policy.forget_after
    insert = pg_insert if s.get_bind().dialect.name == "postgresql" else sqlite_insert
    upsert = insert(LoginFailure).values(key=key, failures=1, last_failure_at=now, blocked_until=None)
    counted = upsert.on_conflict_do_update(
        index_elements=[LoginFailure.key],
        set_={"failures": case((LoginFailure.last_failure_at < stale, 1), else_=LoginFailure.failures + 1),
              "last_failure_at": now},
    ).returning(LoginFailure.failures)
    failures = int(s.execute(counted).scalar_one())
    lock = policy.lockout(failures, limit)
    if lock is not None:
        s.execute(update(LoginFailure).where(LoginFailure.key == key).values(blocked_until=now + lock))
    s.execute(delete(LoginFailure).where(LoginFailure.last_failure_at < stale))
    return failures


def forget(s: Session, key: str) -> None:
    s.execute(delete(LoginFailure).where(LoginFailure.key == key))
