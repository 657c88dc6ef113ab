from __future__ import annotations

from typing import Any

import anyio
from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from backend.auth import service, throttle
from backend.auth.deps import COOKIE_NAME, CurrentUser, DbDep, session_token
from backend.errors import Unauthorized

router = APIRouter(prefix="/api/auth", tags=["auth"])


class LoginRequest(BaseModel):
    username: str = Field(min_length=1, max_length=80)
    password: str = Field(min_length=1, max_length=200)


def _cookie_secure(request: Request) -> bool:
    # request.url.scheme is "https" when the client's connection was TLS, as uvicorn sees it: directly, or
    # from X-Forwarded-Proto when it runs with --proxy-headers behind a trusted proxy.
    return bool(request.app.state.settings.cookie_secure) or request.url.scheme == "https"


@router.post("/login", response_model=dict[str, Any],
             responses={429: {"description": "Too many failed sign-ins; see Retry-After."}})
async def login(body: LoginRequest, response: Response, request: Request, db: DbDep) -> Any:
    policy = throttle.LoginPolicy.from_settings(request.app.state.settings)
    address = request.client.host if request.client else "unknown"

    def run() -> tuple[str, service.CurrentUserInfo]:
        with db.session() as s:
            return service.login(s, body.username, body.password, address, policy)

    try:
        token, user = await anyio.to_thread.run_sync(run)
    except throttle.LoginThrottled as exc:
        return JSONResponse({"error": exc.error, "detail": exc.detail}, status_code=exc.status_code,
                            headers={"Retry-After": str(exc.retry_after)})
    response.set_cookie(COOKIE_NAME, token, httponly=True, samesite="lax", path="/",
                        secure=_cookie_secure(request), max_age=service.SESSION_DAYS * 86400)
    return user.public()


@router.post("/logout")
async def logout(request: Request, response: Response, db: DbDep) -> dict[str, bool]:
    token = session_token(request)
    if token:
        def run() -> None:
            with db.session() as s:
                service.logout(s, token)
        await anyio.to_thread.run_sync(run)
    response.delete_cookie(COOKIE_NAME, path="/", httponly=True, samesite="lax", secure=_cookie_secure(request))
    return {"ok": True}


@router.get("/session")
async def current_session(request: Request, db: DbDep) -> dict[str, Any]:
    """Who is signed in, or `{"user": null}`: lets a page decide between login and app without a 401."""
    token = session_token(request)
    if not token:
        return {"user": None}

    def run() -> service.CurrentUserInfo | None:
        with db.session() as s:
            try:
                return service.user_for_token(s, token)
            except Unauthorized:
                return None

    user = await anyio.to_thread.run_sync(run)
    return {"user": user.public() if user else None}


@router.get("/me")
async def me(user: CurrentUser) -> dict[str, Any]:
    return user.public()
