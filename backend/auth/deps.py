"""Who sends a request: the session token (cookie or bearer), the signed-in user, the admin.

Dependencies that do synchronous database work are plain `def`s (FastAPI runs them in its threadpool);
the ones that only read the request or a user already loaded are `async def`, because each threadpool
hop waits for a turn of the event loop, which beside a hundred streams is what made an ordinary GET slow.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from backend.auth.service import CurrentUserInfo, user_for_token
from backend.db.session import Database
from backend.deps import DbDep
from backend.errors import Forbidden, Unauthorized

COOKIE_NAME = "colleague_session"


def session_token(request: Request) -> str | None:
    token = request.cookies.get(COOKIE_NAME)
    if token:
        return token
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip() or None
    return None


async def signed_in(request: Request) -> str:
    """The session token of a request that carries one (401 without), not yet checked: for a route that
    checks it in the same thread hop as its own work (`authenticate`)."""
    token = session_token(request)
    if not token:
        raise Unauthorized("Not signed in. Please sign in.")
    return token


def authenticate(db: Database, token: str) -> CurrentUserInfo:
    """The user a session token belongs to (401 when it is unknown or expired). Blocking: in a thread."""
    with db.session() as s:
        return user_for_token(s, token)


def current_user(token: Annotated[str, Depends(signed_in)], db: DbDep) -> CurrentUserInfo:
    return authenticate(db, token)


async def admin_user(user: Annotated[CurrentUserInfo, Depends(current_user)]) -> CurrentUserInfo:
    if not user.is_admin:
        raise Forbidden("Only admins can do this.")
    return user


async def searching_user(request: Request, user: Annotated[CurrentUserInfo, Depends(current_user)]) -> CurrentUserInfo:
    """The signed-in user, within their searches and statistics a minute (429 beyond)."""
    await request.app.state.quotas.admit_search(user.id)
    return user


async def exporting_user(request: Request, user: Annotated[CurrentUserInfo, Depends(current_user)]) -> CurrentUserInfo:
    """The signed-in user, within their exports and reports a minute (429 beyond)."""
    await request.app.state.quotas.admit_export(user.id)
    return user


SessionToken = Annotated[str, Depends(signed_in)]
CurrentUser = Annotated[CurrentUserInfo, Depends(current_user)]
AdminUser = Annotated[CurrentUserInfo, Depends(admin_user)]
SearchingUser = Annotated[CurrentUserInfo, Depends(searching_user)]
ExportingUser = Annotated[CurrentUserInfo, Depends(exporting_user)]
