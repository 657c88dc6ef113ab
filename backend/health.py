"""Health a load balancer can use: liveness (`/api/health/live`: the process answers) apart from
readiness (`/api/health/ready`: send it traffic). Ready is 503 while the database is unreachable, this
worker's liveness lock is lost (its turns would look dead to the others), or it is draining: from the
moment SIGTERM arrives (uvicorn's exit signal, as sse-starlette records it), before the streams end and
the turns are saved. `/api/health` stays as the contract has it.

From that moment the instance also refuses new requests (`refuses`, in `backend/asgi.py`): one that reaches it anyway
(in flight to it in the ~0.1 s before uvicorn closes its listener) is answered 503 before the app sees it,
so a proxy passes it to another instance (deploy/nginx.conf: `proxy_next_upstream http_503`) instead of a
chat turn starting here only to be cut by the drain.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse
from sqlalchemy import text
from sse_starlette.sse import AppStatus
from starlette.types import Scope, Send

from backend.errors import Draining

STILL_SERVED = ("/api/health", "/metrics")  # a draining instance still reports on itself
DRAINING_BODY = Draining().body().model_dump_json(exclude_none=True).encode()


def live() -> dict[str, str]:
    return {"status": "alive"}


def ready(request: Request) -> JSONResponse:
    state = request.app.state
    supervisor = state.chat.supervisor
    checks: dict[str, Any] = {"draining": state.chat.draining}
    try:
        with state.db.session() as s:
            s.execute(text("SELECT 1"))
            checks["worker_lock"] = "held" if supervisor.presence.holds(s) else "lost"
        checks["database"] = "ok"
    except Exception as exc:  # readiness reports, it does not fail
        checks["database"] = f"unreachable: {type(exc).__name__}"
    ok = checks["database"] == "ok" and checks.get("worker_lock") == "held" and not checks["draining"]
    return JSONResponse({"status": "ready" if ok else "unready", **checks}, status_code=200 if ok else 503)


def refuses(scope: Scope) -> bool:
    """A new request while the instance drains, but for its own health and metrics."""
    return AppStatus.should_exit and not scope["path"].startswith(STILL_SERVED)


async def refuse(send: Send) -> None:
    """503 (`Retry-After: 1`, `Connection: close`)."""
    await send({"type": "http.response.start", "status": 503, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(DRAINING_BODY)).encode()),
        (b"retry-after", b"1"), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": DRAINING_BODY})
