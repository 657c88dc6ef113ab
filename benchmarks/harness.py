"""What the in-process benchmarks share: a free port, the app with per-user quotas off and its `bench` user, and
uvicorn serving it from a thread."""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any

import uvicorn

from backend.auth.service import ensure_user
from backend.config import Settings
from backend.main import create_app


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def bench_app(db_url: str, model_url: str) -> Any:
    """The app on `db_url` and the fake Messages API at `model_url`, with the user `bench` (password `bench-pw`)."""
    settings = Settings(DATABASE_URL=db_url, ANTHROPIC_API_KEY="bench", ANTHROPIC_BASE_URL=model_url,
                        # one user drives the load: per-user quotas off
                        COLLEAGUE_MAX_CONCURRENT_STREAMS=0, COLLEAGUE_TURNS_PER_MINUTE=0,
                        COLLEAGUE_AI_COLUMN_RUNS_PER_MINUTE=0, COLLEAGUE_DAILY_TOKEN_BUDGET=0)
    app = create_app(settings)
    with app.state.db.session() as s:
        ensure_user(s, "bench", "bench-pw", "user")
    return app


async def serve(app: Any) -> tuple[int, uvicorn.Server, threading.Thread]:
    """(port, server, thread): `app` served on a free local port, once it accepts connections."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        await asyncio.sleep(0.05)
    return port, server, thread
