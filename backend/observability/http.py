"""Per request: an id (`X-Request-ID`, bound for the log lines), its count by route template and status,
its duration (in the app's one pure-ASGI middleware, `backend/asgi.py`); and `/metrics`, readable only
with `COLLEAGUE_METRICS_TOKEN` as a bearer token (404 without the setting: off by default)."""

from __future__ import annotations

import hmac
import re
import time
import uuid

from fastapi import Request
from fastapi.responses import JSONResponse, Response
from starlette.types import Scope

from backend.observability import metrics

_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


def request_id(scope: Scope) -> str:
    """The request's `X-Request-ID` when it is a sane one, else a new id."""
    given = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"x-request-id"), "")
    return given if _REQUEST_ID.fullmatch(given) else uuid.uuid4().hex[:16]


def observed(scope: Scope, status: int, started: float) -> None:
    """A request's count by route template and status, and its duration (`started`: `time.perf_counter`)."""
    route = scope.get("route")
    template = getattr(route, "path", None) or "(unmatched)"
    method = scope.get("method", "")
    metrics.HTTP_REQUESTS.labels(method, template, str(status)).inc()
    metrics.HTTP_DURATION.labels(method, template).observe(time.perf_counter() - started)


def metrics_endpoint(request: Request) -> Response:
    expected = request.app.state.settings.metrics_token
    if not expected:
        return JSONResponse({"error": "not_found", "detail": "No route /metrics."}, status_code=404)
    given = request.headers.get("authorization", "")
    if not hmac.compare_digest(given.encode(), f"Bearer {expected}".encode()):
        return JSONResponse({"error": "unauthorized", "detail": "/metrics needs its bearer token."},
                            status_code=401, headers={"WWW-Authenticate": "Bearer"})
    return Response(metrics.exposition(), media_type="text/plain; version=0.0.4; charset=utf-8")
