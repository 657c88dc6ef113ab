"""Per request: an id (`X-Request-ID`, bound for the log lines), its count by route template and status,
its duration; and `/metrics`, readable only with `COLLEAGUE_METRICS_TOKEN` as a bearer token (404
without the setting: off by default)."""

from __future__ import annotations

import hmac
import re
import time
import uuid

import structlog
from fastapi import Request
from fastapi.responses import JSONResponse, Response
from starlette.types import Message, Receive, Scope, Send

from backend.asgi import HttpMiddleware
from backend.observability import metrics

_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


class ObservedRequests(HttpMiddleware):
    """Pure ASGI (a streamed response passes through untouched; its `send`s cost one comparison each)."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        given = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"x-request-id"), "")
        request_id = given if _REQUEST_ID.fullmatch(given) else uuid.uuid4().hex[:16]
        tokens = structlog.contextvars.bind_contextvars(request_id=request_id)
        started = time.perf_counter()
        status = 500

        async def observed_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", []), (b"x-request-id", request_id.encode())]
            await send(message)

        try:
            await self.app(scope, receive, observed_send)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or "(unmatched)"
            method = scope.get("method", "")
            metrics.HTTP_REQUESTS.labels(method, template, str(status)).inc()
            metrics.HTTP_DURATION.labels(method, template).observe(time.perf_counter() - started)
            structlog.contextvars.reset_contextvars(**tokens)


def metrics_endpoint(request: Request) -> Response:
    expected = request.app.state.settings.metrics_token
    if not expected:
        return JSONResponse({"error": "not_found", "detail": "No route /metrics."}, status_code=404)
    given = request.headers.get("authorization", "")
    if not hmac.compare_digest(given.encode(), f"Bearer {expected}".encode()):
        return JSONResponse({"error": "unauthorized", "detail": "/metrics needs its bearer token."},
                            status_code=401, headers={"WWW-Authenticate": "Bearer"})
    return Response(metrics.exposition(), media_type="text/plain; version=0.0.4; charset=utf-8")
