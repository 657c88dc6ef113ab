"""Users, passwords (argon2) and login sessions (a random token in an httpOnly cookie, its sha256 in the
database), with failed sign-ins throttled per account and per address (backend/auth/throttle.py)."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import Select, bindparam, delete, select
from sqlalchemy.orm import Session

from backend.auth import throttle
from backend.db.base import table_of, utcnow
from backend.db.models import AuthSession, User
from backend.errors import Conflict, InvalidInput, Unauthorized

SESSION_DAYS = 14
_hasher = PasswordHasher()


@cache
def _dummy_hash() -> str:
    """A hash no password matches, checked for unknown names so they cost what a wrong password costs."""
    return _hasher.hash(secrets.token_urlsafe(32))


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class CurrentUserInfo:
    id: int
    username: str
    role: str

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def public(self) -> dict[str, object]:
        return {"id": self.id, "username": self.username, "role": self.role}


# What an operator may set (`create-user`); the demo accounts of `make run` (demo/demo, admin/admin) are the
# documented exception, made by the seed through `create_user` directly.
MIN_PASSWORD = {"user": 8, "admin": 12}


def check_password(password: str, role: str) -> None:
    """InvalidInput unless the password is long enough for the role (an admin's: at least 12 characters)."""
    needed = MIN_PASSWORD.get(role, MIN_PASSWORD["user"])
    if len(password) < needed:
        raise InvalidInput(f"A{'n admin' if role == 'admin' else ''} password must be at least {needed} characters "
                           f"(this one has {len(password)}).")


def create_user(s: Session, username: str, password: str, role: str = "user") -> User:
    username = username.strip()
    if not username or len(username) > 80:
        raise InvalidInput("Username must be 1–80 characters.")
    if len(password) < 4:
        raise InvalidInput("Password must be at least 4 characters.")
    if role not in ("user", "admin"):
        raise InvalidInput("Role must be 'user' or 'admin'.")
    if s.scalar(select(User).where(User.username == username)):
        raise Conflict(f"User {username!r} already exists.")
    user = User(username=username, password_hash=_hasher.hash(password), role=role)
    s.add(user)
    s.flush()
    return user


def ensure_user(s: Session, username: str, password: str, role: str) -> None:
    """Idempotent seeding (demo accounts)."""
    if s.scalar(select(User).where(User.username == username)) is None:
        create_user(s, username, password, role)


def login(s: Session, username: str, password: str, address: str,
          policy: throttle.LoginPolicy) -> tuple[str, CurrentUserInfo]:
    """A new session for the right password; `LoginThrottled` while the name or address is locked out.

    A failure is committed before `Unauthorized` is raised (the session would roll it back otherwise)."""
    account, client = throttle.account_key(username), throttle.address_key(address)
    wait = throttle.retry_after(s, [account, client])
    if wait is not None:
        raise throttle.LoginThrottled(wait)
    user = s.scalar(select(User).where(User.username == username))
    try:
        # An unknown name still pays for one argon2 verification: timing must not tell names apart.
        _hasher.verify(user.password_hash if user else _dummy_hash(), password)
        if user is None:
            raise VerificationError
    except (VerificationError, InvalidHashError):
        throttle.record_failure(s, account, policy.max_per_account, policy)
        throttle.record_failure(s, client, policy.max_per_address, policy)
        s.commit()
        raise Unauthorized("Wrong username or password.") from None
    throttle.forget(s, account)
    token = secrets.token_urlsafe(32)
    s.add(AuthSession(token_hash=token_digest(token), user_id=user.id,
                      expires_at=utcnow() + timedelta(days=SESSION_DAYS)))
    return token, CurrentUserInfo(user.id, user.username, user.role)


def user_for_token(s: Session, token: str) -> CurrentUserInfo:
    """Every signed-in request asks this: one prebuilt query by the session's key, joined to its user (no
    ORM objects, no statement built per request: the cheapest way to ask, see benchmarks/README.md)."""
    row = s.execute(_SESSION_USER, {"b_token": token_digest(token), "b_now": utcnow()}).first()
    if row is None:
        raise Unauthorized("Not signed in, or the session expired. Please sign in.")
    user_id, username, role = row
    return CurrentUserInfo(user_id, username, role)


def _session_user() -> Select[int, str, str]:
    sessions, users = table_of(AuthSession), table_of(User)
    return (select(users.c.id, users.c.username, users.c.role)
            .join(sessions, sessions.c.user_id == users.c.id)
            .where(sessions.c.token_hash == bindparam("b_token"), sessions.c.expires_at >= bindparam("b_now")))


_SESSION_USER = _session_user()


def logout(s: Session, token: str) -> None:
    s.execute(delete(AuthSession).where(AuthSession.token_hash == token_digest(token)))

