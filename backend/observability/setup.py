"""`install`: what `create_app` adds to every app for observability."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from backend.config import Settings
from backend.db.session import Database
from backend.observability import logs, metrics, observe, tracing
from backend.observability.http import metrics_endpoint
from backend.observability.prices import price_table
from backend.observability.usage import router as usage_router


def install(app: FastAPI, settings: Settings, db: Database) -> None:
    """Before the SPA's catch-all route: /metrics, the usage API, tracing (the requests' ids and counts are
    `backend/asgi.py`'s)."""
    price_table(settings.model_prices)  # a malformed COLLEAGUE_MODEL_PRICES stops the app here
    observe.price_overrides = settings.model_prices
    tracing.capture_content = settings.otel_capture_content
    logs.quiet_content_loggers()
    tracing.setup_from_environment()
    tracing.instrument_app(app, db.engine, settings.otel_sql)
    app.add_api_route("/metrics", metrics_endpoint, methods=["GET"], include_in_schema=False)
    app.include_router(usage_router)
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def counted(app: FastAPI) -> AsyncIterator[Any]:
        metrics.worker_started()
        try:
            async with inner(app) as state:
                yield state
        finally:
            metrics.worker_stopped()

    app.router.lifespan_context = counted
