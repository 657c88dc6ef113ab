"""The ASGI app (`backend.main:app`): routers, one error handler per family, the built SPA."""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from http import HTTPStatus
from typing import Any, Literal

import anyio
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from pydantic import BaseModel
from sqlalchemy import text
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from backend.agent.llm import LLM, LocalModel, make_llm
from backend.agent.state import LoopLimits
from backend.ai_columns.router import router as ai_columns_router
from backend.articles.router import router as articles_router
from backend.asgi import Edge
from backend.auth.router import router as auth_router
from backend.chat.router import resume_router
from backend.chat.router import router as chat_router
from backend.chat.service import ChatService
from backend.config import Settings, get_settings
from backend.conversations.router import router as conversations_router
from backend.db.session import Database
from backend.demo.transport import DEMO_MODEL_ID, DemoTransport
from backend.errors import AppError, ErrorBody, InvalidInput, error_code
from backend.exports.router import router as exports_router
from backend.exports.screening_reports import router as screening_reports_router
from backend.health import live, ready
from backend.observability.setup import install as install_observability
from backend.openapi import describe_event_streams, describe_models, describe_payloads
from backend.pages.budget import set_context_budget
from backend.pages.router import router as pages_router
from backend.pages.screening_context import ScreeningPageContext
from backend.provenance.router import router as sources_router
from backend.quotas import Quotas
from backend.registry import REGISTRY
from backend.registry.builtins import load_builtins
from backend.routing import OneHopRoute
from backend.screening.desk import ScreeningDesk
from backend.screening.router import patients as patients_router
from backend.screening.router import screenings as screenings_router
from backend.screening.service import ScreeningService
from backend.sources import close_sources, get_sources
from backend.stats.router import router as stats_router
from backend.streams.router import router as streams_router
from backend.trials.router import router as trials_router
from backend.views.router import router as views_router

log = logging.getLogger(__name__)


@functools.cache
def _tune_collector() -> None:
    """Keep the cyclic garbage collector from stopping the event loop. What start-up built (modules, the
    registry, pydantic's validators) lives as long as the process, yet every full collection walked it,
    with the loop stopped. Frozen (after a collection, so no garbage is frozen with it), it is out of
    reach. What the streams keep alive (their frames, tasks, generators) is still walked by each full
    collection, so there is one per 100 of the middle generation instead of 10 (benchmarks/README.md).
    Once per process: the test suite starts many apps in one."""
    gc.collect()
    gc.freeze()
    young, middle, _old = gc.get_threshold()
    gc.set_threshold(young, middle, 100)


def demo_model(settings: Settings) -> LocalModel:
    """The demo model (`backend.demo`), which answers in this process when there is no API key."""
    return LocalModel(DEMO_MODEL_ID, DemoTransport(delay=settings.demo_delay_ms / 1000))


def create_app(settings: Settings | None = None, llm: LLM | None = None) -> FastAPI:
    settings = settings or get_settings()
    load_builtins()  # a dangling or duplicate registry name stops the app here, with its name
    db = Database(settings.database_url, pool_size=settings.db_pool_size, max_overflow=settings.db_max_overflow)
    llm = llm or make_llm(settings, demo_model(settings))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if settings.colleague_demo:
            from backend.seed import seed_demo
            await anyio.to_thread.run_sync(seed_demo, db)
        if db.engine.dialect.name == "sqlite":
            log.warning("SQLite: one host only (the workers of one `serve`, whose readers of each other's turns "
                        "poll the database); several instances need PostgreSQL")
        supervisor = chat.supervisor  # this worker's running turns
        await anyio.to_thread.run_sync(supervisor.presence.hold)  # this worker's liveness lock (chat/workers.py)
        chat.fanout.listen()  # PostgreSQL: this process's one LISTEN connection (chat/fanout.py)
        try:  # whatever fails, the lock's connection, the model client and the pool are let go
            await supervisor.sweep_and_continue()  # turns a worker left: continued here, or marked interrupted
            sweeper = asyncio.create_task(supervisor.sweep_forever())
            _tune_collector()
            try:
                yield
            finally:
                sweeper.cancel()
                await app.state.screening.shutdown()  # running screenings end interrupted, what they have saved
                await supervisor.shutdown()  # running turns save what they have; their readers are told to resume
        finally:
            await chat.fanout.stop()
            await anyio.to_thread.run_sync(supervisor.presence.release)
            await llm.close()  # this loop's model client and its pooled connections
            await close_sources()
            db.dispose()

    sources = get_sources(settings, db)  # live ones: rate limits shared with every instance on PostgreSQL
    chat = ChatService(db, llm, sources=sources, limits=LoopLimits(idle_timeout=settings.model_idle_timeout),
                       flush_seconds=settings.fanout_flush_ms / 1000,
                       safety_seconds=settings.fanout_safety_poll_seconds,
                       coalesce_seconds=settings.coalesce_ms / 1000, busy_at=settings.coalesce_busy_turns)
    chat.supervisor.drain_seconds, chat.supervisor.graceful_seconds = settings.drain_deadline, settings.graceful_seconds
    app = FastAPI(title="Colleague", lifespan=lifespan)
    app.router.route_class = OneHopRoute  # `/api/health` and the SPA's routes too (backend/routing.py)
    # Request ids and counts, CSP and friends, cross-site writes refused, bodies capped per route and unread
    # without a session, new requests 503 from SIGTERM on: one pure-ASGI middleware (backend/asgi.py).
    app.add_middleware(Edge)
    app.state.settings = settings
    app.state.db = db
    app.state.llm = llm
    app.state.sources = sources
    app.state.chat = chat  # the routes' `ChatDep` (chat/router.py)
    app.state.quotas = Quotas(db, settings)
    app.state.chat.admit_stream = app.state.quotas.admit_stream
    app.state.screening = ScreeningService(db, llm, sources, app.state.quotas, chat.presence,
                                           concurrency=settings.screening_concurrency)
    app.state.screening_desk = chat.supervisor.screenings = ScreeningDesk(db, sources)  # reports, chat tools
    set_context_budget(settings.context_token_budget)  # what every page's context_builder fits into

    _error_handlers(app)
    for router in (auth_router, chat_router, resume_router, conversations_router, pages_router, trials_router,
                   articles_router, streams_router, ai_columns_router, exports_router, stats_router,
                   patients_router, screenings_router, screening_reports_router, views_router, sources_router):
        app.include_router(router)
    install_observability(app, settings, db)  # /metrics, /api/admin/usage, request ids and counts, tracing
    describe_event_streams(app)  # the SSE routes' events in the OpenAPI document
    describe_payloads(app, REGISTRY.payloads.values())  # the payload models the cards render
    describe_models(app, [ScreeningPageContext])  # what TrialScout sends as `context.screening`

    app.add_api_route("/api/health", health, methods=["GET"], response_model_exclude_none=True)
    app.add_api_route("/api/health/live", live, methods=["GET"])
    # A load balancer's probe, out of the API document: its 503 is a status report, not an ErrorBody (README).
    app.add_api_route("/api/health/ready", ready, methods=["GET"], response_class=JSONResponse,
                      include_in_schema=False)
    app.add_api_route("/api/{path:path}", no_such_method, methods=list(ANY_METHOD), include_in_schema=False)
    app.add_api_route("/{path:path}", spa, methods=["GET"], include_in_schema=False)  # last: the fallback
    return app


class LlmInfo(BaseModel):
    mode: str
    model: str
    label: str


class SourcesInfo(BaseModel):
    mode: Literal["offline", "live"]
    trials: str
    pubmed: str
    ncbi_api_key: bool | None = None  # live only
    pubmed_requests_per_second: int | None = None  # live only


class HealthRead(BaseModel):
    status: Literal["ok", "degraded"]
    database: str  # "ok" or "unreachable: <what>"
    llm: LlmInfo
    sources: SourcesInfo


# Endpoints are module-level functions: FastAPI keeps the callables it has classified in a process-wide
# cache, so an endpoint closed over its app would keep every app a process ever built alive.
def health(request: Request) -> HealthRead:
    state = request.app.state
    try:
        with state.db.session() as s:
            s.execute(text("SELECT 1"))
        database = "ok"
    except Exception as exc:  # health reports, it does not fail
        database = f"unreachable: {type(exc).__name__}"
    return HealthRead(status="ok" if database == "ok" else "degraded", database=database,
                      llm=LlmInfo(**state.llm.describe()), sources=SourcesInfo(**state.sources.describe()))


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


ANY_METHOD = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def _allowed(request: Request) -> list[str]:
    """The methods some route (not a fallback) takes at this request's path, asked of the router itself."""
    found = []
    for method in ANY_METHOD:
        scope = {**request.scope, "method": method}
        for route in request.app.router.routes:
            if getattr(route, "endpoint", None) not in (no_such_method, spa) and route.matches(scope)[0] == Match.FULL:
                found.append(method)
                break
    return found


async def no_such_method(request: Request, path: str) -> JSONResponse:
    """An API path no route took with this method: 405 with every method its routes have in `Allow`
    (Starlette names only the first route's, and a GET fell to the SPA's fallback), else 404."""
    allowed = _allowed(request)
    if not allowed:
        body = ErrorBody(error="not_found", detail=f"No route /api/{path}.")
        return JSONResponse(body.model_dump(exclude_none=True), status_code=404)
    body = ErrorBody(error="method_not_allowed",
                     detail=f"{request.method} is not allowed here; this path takes {', '.join(allowed)}.")
    return JSONResponse(body.model_dump(exclude_none=True), status_code=405, headers={"Allow": ", ".join(allowed)})


async def spa(request: Request, path: str) -> Any:
    """The built frontend: a file of it, else its index.html (the SPA routes itself)."""
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
