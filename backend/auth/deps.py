"""FastAPI dependencies: the database, the signed-in user, the admin."""

from __future__ import annotations

from typing import Annotated

import anyio
from fastapi import Depends, Request

from backend.auth.service import CurrentUserInfo, user_for_token
from backend.db.session import Database
from backend.errors import Forbidden, Unauthorized

COOKIE_NAME = "colleague_session"


def get_db(request: Request) -> Database:
    return request.app.state.db


def session_token(request: Request) -> str | None:
    token = request.cookies.get(COOKIE_NAME)
    if token:
        return token
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip() or None
    return None


async def current_user(request: Request) -> CurrentUserInfo:
    token = session_token(request)
    if not token:
        raise Unauthorized("Not signed in. Please sign in.")
    db: Database = request.app.state.db

    def lookup() -> CurrentUserInfo:
        with db.session() as s:
            return user_for_token(s, token)

    return await anyio.to_thread.run_sync(lookup)


async def admin_user(user: Annotated[CurrentUserInfo, Depends(current_user)]) -> CurrentUserInfo:
    if not user.is_admin:
        raise Forbidden("Only admins can do this.")
    return user


DbDep = Annotated[Database, Depends(get_db)]
CurrentUser = Annotated[CurrentUserInfo, Depends(current_user)]
AdminUser = Annotated[CurrentUserInfo, Depends(admin_user)]
