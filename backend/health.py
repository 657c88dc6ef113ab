"""Health a load balancer can use: liveness (`/api/health/live`: the process answers) apart from
readiness (`/api/health/ready`: send it traffic). Ready is 503 while the database is unreachable, this
worker's liveness lock is lost (its turns would look dead to the others), or it is draining: from the
moment SIGTERM arrives (uvicorn's exit signal, as sse-starlette records it), before the streams end and
the turns are saved. `/api/health` stays as the contract has it.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse
from sqlalchemy import text
from sse_starlette.sse import AppStatus


def live() -> dict[str, str]:
    return {"status": "alive"}


def ready(request: Request) -> JSONResponse:
    state = request.app.state
    supervisor = state.chat.supervisor
    checks: dict[str, Any] = {"draining": bool(AppStatus.should_exit or supervisor.closing)}
    try:
        with state.db.session() as s:
            s.execute(text("SELECT 1"))
            checks["worker_lock"] = "held" if supervisor.presence.holds(s) else "lost"
        checks["database"] = "ok"
    except Exception as exc:  # readiness reports, it does not fail
        checks["database"] = f"unreachable: {type(exc).__name__}"
    ok = checks["database"] == "ok" and checks.get("worker_lock") == "held" and not checks["draining"]
    return JSONResponse({"status": "ready" if ok else "unready", **checks}, status_code=200 if ok else 503)
