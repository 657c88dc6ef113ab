"""The app's one pure-ASGI middleware (no request bodies parsed, a streamed response passes through).

Each request, in this order, as each module explains: its id bound for the log lines, its count and
duration (`observability/http.py`, around everything below: it sees every status); the security headers
on every response and the refusal of a cross-site write (`web_security.py`); a body's limit and the
session check before it is read (`body_limits.py`); the refusal of a new request while the instance
drains (`health.py`). One coroutine and one wrapped `send` per request: as four middlewares they were
seven coroutine frames and two wrapped sends, held for a stream's whole life (benchmarks/README.md).
"""

from __future__ import annotations

import time

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from backend import body_limits, health, web_security
from backend.observability.http import observed, request_id


class Edge:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = request_id(scope)
        tokens = structlog.contextvars.bind_contextvars(request_id=rid)
        started = time.perf_counter()
        sending = _Send(send, web_security.headers_for(scope.get("path", "")), rid.encode())
        try:
            if (forbidden := web_security.forbidden_body(scope)) is not None:
                await web_security.refuse(sending, forbidden)
                return
            if scope["method"] in body_limits.BODY_METHODS:
                body = await body_limits.read_body(scope, receive, sending)
                if body is None:
                    return
                receive = body_limits.Replay(body, receive)
                del body
            if health.refuses(scope):
                await health.refuse(sending)
                return
            await self.app(scope, receive, sending)
        finally:
            observed(scope, sending.status, started)
            structlog.contextvars.reset_contextvars(**tokens)


class _Send:
    """The server's `send` with the security headers and `X-Request-ID` added to the response's start,
    whose status it keeps for the count (500 until one is sent)."""

    __slots__ = ("extra", "request_id", "send", "status")

    def __init__(self, send: Send, extra: list[tuple[bytes, bytes]], request_id: bytes) -> None:
        self.send = send
        self.extra = extra
        self.request_id = request_id
        self.status = 500

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            message["headers"] = [
                *web_security.with_headers(message.get("headers", []), self.extra),
                (b"x-request-id", self.request_id),
            ]
        await self.send(message)
