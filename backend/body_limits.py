"""Request bodies bounded before they are read, and refused before they are read when nobody is signed in
(in front of every route: a part of the app's one pure-ASGI middleware, `backend/asgi.py`).

FastAPI reads and parses a body before it runs a route's dependencies, its authentication included, and
no route capped a body's size: an anonymous 111 MB POST was parsed whole (8 s of a worker, 1 GB of memory)
to be answered 401. Here, for a request with a body (a POST, PUT, PATCH or DELETE):

1. over its route's limit (`LIMITS`, by path; `DEFAULT_LIMIT` elsewhere) by its `Content-Length`: 413 at
   once; without one (chunked), read up to the limit and 413 at the first byte past it;
2. an API route other than sign-in/out with no session token at all (cookie or bearer): 401, unread;
3. a body larger than `CHECK_SESSION_ABOVE` (or of unknown length): its session is checked against the
   database first (401 unread when it is unknown or expired); smaller ones leave that to the route, which
   checks it anyway, so an ordinary request pays nothing extra.

The body read here is handed to the app as one message; later `receive` calls go to the server, so a
streaming response still hears the client disconnect. Behind a reverse proxy, set its limit at least as
high as the largest here (README, "Deployment").
"""

from __future__ import annotations

import json
from http import HTTPStatus

import anyio
from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from backend.auth.deps import authenticate, session_token
from backend.errors import AppError, error_code

MB = 1_000_000
LIMITS: tuple[tuple[str, int], ...] = (  # (path prefix, bytes): the first that matches
    ("/api/exports/table", 8 * MB),  # up to 5,000 rows as the page shows them
    ("/api/ai-columns/evaluate", 3 * MB),  # up to 500 ids and 2 MB of staged row summaries
    ("/api/reports", 2 * MB),  # up to 500 rows, charts and a summary
    ("/api/chat/", 1 * MB),  # a message (20,000 characters) and its page context (256 KB of JSON)
    ("/api/auth/", 16_000),
    ("/api/views", 160_000),  # a page's view: its state is at most 128 KB of JSON
)
DEFAULT_LIMIT = 256_000  # research streams, conversation settings, statistics requests
CHECK_SESSION_ABOVE = 64_000
PUBLIC = ("/api/auth/login", "/api/auth/logout")
BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def limit_for(path: str) -> int:
    return next((size for prefix, size in LIMITS if path.startswith(prefix)), DEFAULT_LIMIT)


async def read_body(scope: Scope, receive: Receive, send: Send) -> bytes | None:
    """The body of a request with one (`BODY_METHODS`), read under its route's limit; None when it was
    answered here (413, 401) or the client left before sending it (nobody to answer)."""
    path: str = scope["path"]
    limit = limit_for(path)
    request = Request(scope)
    declared = request.headers.get("content-length")
    size = int(declared) if declared and declared.isascii() and declared.isdigit() else None
    if size is not None and size > limit:
        await _refuse(send, 413, _too_large(limit))
        return None
    if path.startswith("/api/") and not path.startswith(PUBLIC):
        token = session_token(request)
        if not token:
            await _refuse(send, 401, "Not signed in. Please sign in.")
            return None
        if size is None or size > CHECK_SESSION_ABOVE:
            try:
                await anyio.to_thread.run_sync(authenticate, scope["app"].state.db, token)
            except AppError as exc:
                await _refuse(send, exc.status_code, exc.detail)
                return None
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        body += message.get("body", b"")
        if len(body) > limit:
            await _refuse(send, 413, _too_large(limit))
            return None
        if not message.get("more_body", False):
            return bytes(body)


class Replay:
    """`receive` for the app: the body read here as one message, then the server's own (a streaming
    response still hears the client disconnect). The body is let go once handed over: the app keeps its
    own copy, and a stream's request lives as long as the stream."""

    __slots__ = ("body", "receive")

    def __init__(self, body: bytes, receive: Receive) -> None:
        self.body: bytes | None = body
        self.receive = receive

    async def __call__(self) -> Message:
        if (body := self.body) is not None:
            self.body = None
            return {"type": "http.request", "body": body, "more_body": False}
        return await self.receive()


def _too_large(limit: int) -> str:
    shown = f"{limit / MB:g} MB" if limit >= MB else f"{limit / 1000:g} KB"
    return f"The request body is larger than this route accepts ({shown}). Send less: fewer rows or shorter text."


async def _refuse(send: Send, status: int, detail: str) -> None:
    body = json.dumps({"error": error_code(status), "detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == HTTPStatus.REQUEST_ENTITY_TOO_LARGE:
        headers.append((b"connection", b"close"))  # the rest of the body is never read
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
