"""The FastAPI dependencies every router shares: the database, the signed-in user, the admin, and the
app's services (built once in `backend.main.create_app` and kept on `app.state`).

Dependencies and endpoints that do synchronous database work are plain `def`s: FastAPI runs them in its
threadpool, so none blocks the event loop. The ones that only read `app.state` (or check a user already
loaded) are `async def`: FastAPI runs a sync dependency in a thread too, and each such hop waits for a
turn of the event loop, which beside a hundred streams is what made an ordinary GET slow.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from backend.ai_columns.service import AiColumnService
from backend.auth.service import CurrentUserInfo, user_for_token
from backend.chat.service import ChatService
from backend.config import Settings
from backend.db.session import Database
from backend.errors import Forbidden, Unauthorized
from backend.screening.service import ScreeningService
from backend.sources import Sources

COOKIE_NAME = "colleague_session"


async def get_db(request: Request) -> Database:
    return request.app.state.db


async def get_settings(request: Request) -> Settings:
    return request.app.state.settings


async def get_chat(request: Request) -> ChatService:
    return request.app.state.chat


async def get_sources(request: Request) -> Sources:
    return request.app.state.sources


async def get_ai_columns(request: Request) -> AiColumnService:
    """One service per app, built on first use from what the app already holds (and its settings then)."""
    state = request.app.state
    service: AiColumnService | None = getattr(state, "ai_columns", None)
    if service is None:
        service = AiColumnService(state.db, state.llm, state.sources,
                                  concurrency=state.settings.ai_column_concurrency)
        state.ai_columns = service
    return service


async def get_screening(request: Request) -> ScreeningService:
    return request.app.state.screening


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


def current_user(token: Annotated[str, Depends(signed_in)],
                 db: Annotated[Database, Depends(get_db)]) -> CurrentUserInfo:
    return authenticate(db, token)


async def admin_user(user: Annotated[CurrentUserInfo, Depends(current_user)]) -> CurrentUserInfo:
    if not user.is_admin:
        raise Forbidden("Only admins can do this.")
    return user


DbDep = Annotated[Database, Depends(get_db)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
ChatDep = Annotated[ChatService, Depends(get_chat)]
SourcesDep = Annotated[Sources, Depends(get_sources)]
AiColumnsDep = Annotated[AiColumnService, Depends(get_ai_columns)]
ScreeningDep = Annotated[ScreeningService, Depends(get_screening)]
SessionToken = Annotated[str, Depends(signed_in)]
CurrentUser = Annotated[CurrentUserInfo, Depends(current_user)]
AdminUser = Annotated[CurrentUserInfo, Depends(admin_user)]
