from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from backend.auth import service, throttle
from backend.auth.deps import COOKIE_NAME, CurrentUser, session_token
from backend.deps import DbDep
from backend.errors import Unauthorized, error_responses
from backend.routing import OneHopRoute

router = APIRouter(prefix="/api/auth", tags=["auth"], route_class=OneHopRoute)


class UserRead(BaseModel):
    id: int
    username: str
    role: str


class SessionRead(BaseModel):
    user: UserRead | None


class LoginRequest(BaseModel):
    username: str = Field(min_length=1, max_length=80)
    password: str = Field(min_length=1, max_length=200)


def _cookie_secure(request: Request) -> bool:
    # request.url.scheme is "https" when the client's connection was TLS, as uvicorn sees it: directly, or
    # from X-Forwarded-Proto when it runs with --proxy-headers behind a trusted proxy.
    return bool(request.app.state.settings.cookie_secure) or request.url.scheme == "https"


@router.post("/login", response_model=UserRead, responses=error_responses(400, 401, 422, 429))
def login(body: LoginRequest, response: Response, request: Request, db: DbDep) -> Any:
    policy = throttle.LoginPolicy.from_settings(request.app.state.settings)
    address = request.client.host if request.client else "unknown"
    try:
        with db.session() as s:
            token, user = service.login(s, body.username, body.password, address, policy)
    except throttle.LoginThrottled as exc:
        return JSONResponse({"error": exc.error, "detail": exc.detail}, status_code=exc.status_code,
                            headers={"Retry-After": str(exc.retry_after)})
    response.set_cookie(COOKIE_NAME, token, httponly=True, samesite="lax", path="/",
                        secure=_cookie_secure(request), max_age=service.SESSION_DAYS * 86400)
    return user.public()


@router.post("/logout")
def logout(request: Request, response: Response, db: DbDep) -> dict[str, bool]:
    token = session_token(request)
    if token:
        with db.session() as s:
            service.logout(s, token)
    response.delete_cookie(COOKIE_NAME, path="/", httponly=True, samesite="lax", secure=_cookie_secure(request))
    return {"ok": True}


@router.get("/session")
def current_session(request: Request, db: DbDep) -> SessionRead:
    """Who is signed in, or `{"user": null}`: lets a page decide between login and app without a 401."""
    token = session_token(request)
    if not token:
        return SessionRead(user=None)
    with db.session() as s:
        try:
            user: service.CurrentUserInfo | None = service.user_for_token(s, token)
        except Unauthorized:
            user = None
    return SessionRead(user=UserRead.model_validate(user.public()) if user else None)


@router.get("/me", responses=error_responses(401))
async def me(user: CurrentUser) -> UserRead:
    return UserRead.model_validate(user.public())
