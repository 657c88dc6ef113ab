"""The ASGI app (`backend.main:app`): routers, one error handler per family, the built SPA."""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from http import HTTPStatus
from typing import Any

import anyio
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from sqlalchemy import text
from starlette.exceptions import HTTPException as StarletteHTTPException

from backend.agent.llm import LLM, make_llm
from backend.agent.loop import LoopLimits
from backend.ai_columns.router import router as ai_columns_router
from backend.articles.router import router as articles_router
from backend.auth.router import router as auth_router
from backend.chat.router import resume_router
from backend.chat.router import router as chat_router
from backend.chat.service import ChatService
from backend.config import Settings, get_settings
from backend.conversations.router import router as conversations_router
from backend.db.session import Database
from backend.errors import AppError, ErrorBody, InvalidInput, error_code
from backend.exports.router import router as exports_router
from backend.openapi import describe_event_streams
from backend.pages.budget import set_context_budget
from backend.pages.router import router as pages_router
from backend.quotas import Quotas
from backend.registry.builtins import load_builtins
from backend.routing import OneHopRoute
from backend.screening.router import patients as patients_router
from backend.screening.router import screenings as screenings_router
from backend.screening.service import ScreeningService
from backend.sources import close_sources, get_sources
from backend.stats.router import router as stats_router
from backend.streams.router import router as streams_router
from backend.trials.router import router as trials_router
from backend.web_security import WebSecurity

log = logging.getLogger(__name__)


@functools.cache
def _tune_collector() -> None:
    """Keep the cyclic garbage collector from stopping the event loop. What start-up built (modules, the
    registry, pydantic's validators: ~290k objects) lives as long as the process, yet every full
    collection walked it: 200–300 ms with the loop stopped, every few seconds beside 100 streams. Frozen
    (after a collection, so no garbage is frozen with it), it is out of reach. What the streams keep alive
    (~100k objects: their frames, tasks, generators) still cost 25–40 ms a full collection, which the
    default thresholds ran every ~3 s; one full collection per 100 of the middle generation instead of 10
    makes that every ~30 s. Once per process: the test suite starts many apps in one."""
    gc.collect()
    gc.freeze()
    young, middle, _old = gc.get_threshold()
    gc.set_threshold(young, middle, 100)


def create_app(settings: Settings | None = None, llm: LLM | None = None) -> FastAPI:
    settings = settings or get_settings()
    load_builtins()  # a dangling or duplicate registry name stops the app here, with its name
    db = Database(settings.database_url)
    llm = llm or make_llm(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if settings.colleague_demo:
            from backend.seed import seed_demo
            await anyio.to_thread.run_sync(seed_demo, db)
        chat: ChatService = app.state.chat
        await anyio.to_thread.run_sync(chat.presence.hold)  # this worker's liveness lock (chat/workers.py)
        try:  # whatever fails, the lock's connection, the model client and the pool are let go
            await chat.sweep_and_continue()  # turns a worker left: continued here, or marked interrupted
            sweeper = asyncio.create_task(chat.sweep_forever())
            _tune_collector()
            try:
                yield
            finally:
                sweeper.cancel()
                await app.state.screening.shutdown()  # running screenings end interrupted, what they have saved
                await chat.shutdown()  # running turns save what they have; their readers are told to resume
        finally:
            await anyio.to_thread.run_sync(chat.presence.release)
            await llm.close()  # this loop's model client and its pooled connections
            await close_sources()
            db.dispose()

    app = FastAPI(title="Colleague", lifespan=lifespan)
    app.router.route_class = OneHopRoute  # `/api/health` and the SPA's routes too (backend/routing.py)
    app.add_middleware(WebSecurity)  # CSP and friends on every response; cross-site writes refused
    app.state.settings = settings
    app.state.db = db
    app.state.llm = llm
    app.state.sources = get_sources(settings)
    app.state.chat = ChatService(db, llm, sources=app.state.sources,
                                 limits=LoopLimits(idle_timeout=settings.model_idle_timeout))
    app.state.quotas = Quotas(db, settings)
    app.state.screening = ScreeningService(db, llm, app.state.sources, app.state.quotas, app.state.chat.presence,
                                           concurrency=settings.screening_concurrency)
    set_context_budget(settings.context_token_budget)  # what every page's context_builder fits into

    _error_handlers(app)
    for router in (auth_router, chat_router, resume_router, conversations_router, pages_router, trials_router,
                   articles_router, streams_router, ai_columns_router, exports_router, stats_router,
                   patients_router, screenings_router):
        app.include_router(router)
    describe_event_streams(app)  # the SSE routes' events in the OpenAPI document

    app.add_api_route("/api/health", health, methods=["GET"])
    app.add_api_route("/{path:path}", spa, methods=["GET"], include_in_schema=False)  # last: the fallback
    return app


# Endpoints are module-level functions: FastAPI keeps the callables it has classified in a process-wide
# cache, so an endpoint closed over its app would keep every app a process ever built alive.
def health(request: Request) -> dict[str, Any]:
    state = request.app.state
    try:
        with state.db.session() as s:
            s.execute(text("SELECT 1"))
        database = "ok"
    except Exception as exc:  # health reports, it does not fail
        database = f"unreachable: {type(exc).__name__}"
    return {"status": "ok" if database == "ok" else "degraded", "database": database,
            "llm": state.llm.describe(), "sources": state.sources.describe()}


def _error_handlers(app: FastAPI) -> None:
    """Every error leaves in one shape, `ErrorBody` {error, detail, errors?} (see backend.errors)."""

    def respond(status_code: int, body: ErrorBody, headers: Mapping[str, str] | None = None) -> JSONResponse:
        return JSONResponse(body.model_dump(exclude_none=True), status_code=status_code, headers=headers)

    @app.exception_handler(AppError)
    async def app_error(_request: Request, exc: AppError) -> JSONResponse:
        return respond(exc.status_code, exc.body(), exc.headers())

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        error = InvalidInput.from_errors(exc.errors())
        return respond(error.status_code, error.body())

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        # Starlette's own: an unknown route, a method the route does not have, a body that is not JSON.
        detail = exc.detail if isinstance(exc.detail, str) else HTTPStatus(exc.status_code).phrase
        return respond(exc.status_code, ErrorBody(error=error_code(exc.status_code), detail=detail), exc.headers)

    @app.exception_handler(Exception)
    async def crashed(_request: Request, _exc: Exception) -> JSONResponse:
        # Logged by the server; the client learns nothing of the internals.
        return respond(500, ErrorBody(error="internal_error", detail="Something went wrong on our side."))


async def spa(request: Request, path: str) -> Any:
    """The built frontend: a file of it, else its index.html (the SPA routes itself); API paths 404."""
    if path.startswith("api/") or path == "api":
        body = ErrorBody(error="not_found", detail=f"No route /{path}.")
        return JSONResponse(body.model_dump(exclude_none=True), status_code=404)
    dist = request.app.state.settings.frontend_dist
    candidate = (dist / path).resolve()
    if path and candidate.is_file() and dist.resolve() in candidate.parents:
        return FileResponse(candidate)
    index = dist / "index.html"
    if index.is_file():
        return FileResponse(index, headers={"Cache-Control": "no-cache"})
    return HTMLResponse("<h1>Colleague</h1><p>The frontend is not built. Run <code>make run</code>.</p>",
                        status_code=503)


app: FastAPI  # built on first access, see __getattr__


def __getattr__(name: str) -> Any:
    # `backend.main:app` for uvicorn, built on first access so importing this module has no side effects.
    if name == "app":
        global app
        app = create_app()
        return app
    raise AttributeError(name)
