"""Settings, read from the environment (see README "Configuration")."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DRAIN_MARGIN = 0.5  # seconds of `drain_seconds` kept for the last suspensions and the exit


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=None, extra="ignore", populate_by_name=True)

    database_url: str = Field(default=f"sqlite:///{PROJECT_ROOT / 'var' / 'colleague.db'}",
                              alias="DATABASE_URL")
    anthropic_api_key: str | None = Field(default=None, alias="ANTHROPIC_API_KEY")
    # Where the SDK sends requests when a key is set; tests point it at a fake Messages API server.
    anthropic_base_url: str | None = Field(default=None, alias="ANTHROPIC_BASE_URL")
    colleague_model: str = Field(default="claude-sonnet-4-6", alias="COLLEAGUE_MODEL")
    # "local": ANTHROPIC_BASE_URL is a local Messages API server (Ollama, llama.cpp's llama-server), so
    # requests leave out what those lack: prompt caching, tool_choice, metadata (backend/agent/local_server.py).
    colleague_model_server: Literal["anthropic", "local"] = Field(default="anthropic", alias="COLLEAGUE_MODEL_SERVER")
    # The models a conversation may switch to (comma-separated ids), besides COLLEAGUE_MODEL.
    colleague_models: str = Field(default="claude-sonnet-4-6,claude-opus-4-6,claude-haiku-4-5",
                                  alias="COLLEAGUE_MODELS")
    colleague_sources: Literal["offline", "live"] = Field(default="offline", alias="COLLEAGUE_SOURCES")
    # The offline corpus's search index, built on first use and cached here (rebuilt when the data changes).
    offline_index_dir: Path = Field(default=PROJECT_ROOT / "var", alias="COLLEAGUE_OFFLINE_INDEX_DIR")
    # A statement over the offline index running longer is stopped and its search answered 422.
    offline_query_seconds: float = Field(default=5.0, gt=0, le=60, alias="COLLEAGUE_OFFLINE_QUERY_SECONDS")
    ncbi_api_key: str | None = Field(default=None, alias="NCBI_API_KEY")
    # Pause between streamed chunks of the demo model, so the UI visibly streams; tests set 0.
    demo_delay_ms: int = Field(default=20, alias="COLLEAGUE_DEMO_DELAY_MS")
    # Model requests in flight per AI column run.
    ai_column_concurrency: int = Field(default=8, ge=1, le=64, alias="COLLEAGUE_AI_COLUMN_CONCURRENCY")
    # Model requests in flight per screening (one per trial).
    screening_concurrency: int = Field(default=8, ge=1, le=64, alias="COLLEAGUE_SCREENING_CONCURRENCY")
    # Seconds a streaming model call may go without any event from the Messages API (before the first
    # one too) before it is abandoned as stalled; separate from the SDK's per-request timeout.
    model_idle_timeout: float = Field(default=60.0, gt=0, alias="COLLEAGUE_MODEL_IDLE_TIMEOUT")
    colleague_demo: bool = Field(default=False, alias="COLLEAGUE_DEMO")
    # Signs nothing: session ids are random and stored hashed; this marks cookies Secure even over plain
    # HTTP (they are Secure anyway whenever the request came over HTTPS).
    cookie_secure: bool = Field(default=False, alias="COLLEAGUE_COOKIE_SECURE")
    # Failed sign-ins before a lockout, per account name and per client address (backend/auth/throttle.py).
    login_max_failures: int = Field(default=5, ge=1, alias="COLLEAGUE_LOGIN_MAX_FAILURES")
    login_max_failures_per_address: int = Field(default=20, ge=1, alias="COLLEAGUE_LOGIN_MAX_FAILURES_PER_ADDRESS")
    # The first lockout; each further failure doubles it, up to the maximum.
    login_lockout_seconds: int = Field(default=30, ge=1, alias="COLLEAGUE_LOGIN_LOCKOUT_SECONDS")
    login_max_lockout_seconds: int = Field(default=900, ge=1, alias="COLLEAGUE_LOGIN_MAX_LOCKOUT_SECONDS")
    # Per-user cost bounds (backend/quotas); 0 turns a limit off. Counters live in the database, so every
    # worker enforces the same limits.
    max_concurrent_streams: int = Field(default=3, ge=0, alias="COLLEAGUE_MAX_CONCURRENT_STREAMS")
    turns_per_minute: int = Field(default=20, ge=0, alias="COLLEAGUE_TURNS_PER_MINUTE")
    ai_column_runs_per_minute: int = Field(default=30, ge=0, alias="COLLEAGUE_AI_COLUMN_RUNS_PER_MINUTE")
    # Rows (model calls, cached ones included) a user's AI column runs may ask for a minute, and runs at once
    # (per worker).
    ai_column_rows_per_minute: int = Field(default=2_000, ge=0, alias="COLLEAGUE_AI_COLUMN_ROWS_PER_MINUTE")
    max_concurrent_ai_column_runs: int = Field(default=2, ge=0, alias="COLLEAGUE_MAX_CONCURRENT_AI_COLUMN_RUNS")
    # Trial and article searches and statistics, and exports and reports, a user may ask for a minute.
    searches_per_minute: int = Field(default=120, ge=0, alias="COLLEAGUE_SEARCHES_PER_MINUTE")
    exports_per_minute: int = Field(default=20, ge=0, alias="COLLEAGUE_EXPORTS_PER_MINUTE")
    screenings_per_minute: int = Field(default=10, ge=0, alias="COLLEAGUE_SCREENINGS_PER_MINUTE")
    daily_token_budget: int = Field(default=2_000_000, ge=0, alias="COLLEAGUE_DAILY_TOKEN_BUDGET")
    # How much of the system prompt a page's context may take (estimated at 4 characters per token).
    context_token_budget: int = Field(default=8_000, ge=500, alias="COLLEAGUE_CONTEXT_TOKEN_BUDGET")
    # Observability (backend/observability; README "Operations"). /metrics answers only with this bearer token.
    metrics_token: str | None = Field(default=None, alias="COLLEAGUE_METRICS_TOKEN")
    # Record prompts, answers and tool inputs/results in trace spans: off, they hold patient notes.
    otel_capture_content: bool = Field(default=False, alias="COLLEAGUE_OTEL_CAPTURE_CONTENT")
    # A span per SQL statement (some twenty a turn): off, they make tracing cost more CPU (benchmarks/README.md).
    otel_sql: bool = Field(default=False, alias="COLLEAGUE_OTEL_SQL")
    log_format: Literal["json", "console"] = Field(default="json", alias="COLLEAGUE_LOG_FORMAT")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(default="INFO", alias="COLLEAGUE_LOG_LEVEL")
    # Prices per million tokens over the built-in list prices: {"model-prefix": [in, out, cache_read, cache_write]}.
    model_prices: str | None = Field(default=None, alias="COLLEAGUE_MODEL_PRICES")
    # Each process's PostgreSQL connections: up to pool + overflow, plus its liveness lock's and listener's (README).
    db_pool_size: int = Field(default=10, ge=1, alias="COLLEAGUE_DB_POOL_SIZE")
    db_max_overflow: int = Field(default=20, ge=0, alias="COLLEAGUE_DB_MAX_OVERFLOW")
    # Readers of a turn that runs on another instance (PostgreSQL; README "Several instances"): its
    # events are written out at most this far apart while they read, and each instance looks at the
    # database this often without a notification (missed ones: a listener that reconnected).
    # On SIGTERM, the seconds until this process has exited: keep it below the process manager's stop timeout
    # (docker's 10 s, systemd's TimeoutStopSec). Open requests get it less twice `DRAIN_MARGIN` (uvicorn's
    # graceful shutdown), running turns less one margin to be saved (those late written together:
    # `Supervisor.shutdown`); the last margin is for the exit.
    drain_seconds: float = Field(default=3.0, ge=1.5, le=300, alias="COLLEAGUE_DRAIN_SECONDS")
    fanout_flush_ms: int = Field(default=25, ge=1, le=500, alias="COLLEAGUE_FANOUT_FLUSH_MS")
    fanout_safety_poll_seconds: float = Field(default=2.0, gt=0, le=300, alias="COLLEAGUE_FANOUT_SAFETY_POLL_SECONDS")
    # Text deltas of one answer that come within this of the last text frame go out together as one frame
    # (backend/chat/coalesce.py): fewer events to number, store and send; a delta after a quiet spell goes
    # out at once. 0 sends every delta as it comes. The window scales with the turns running beside a turn
    # on its worker: none for a turn alone, all of it from COALESCE_BUSY_TURNS on (0: all of it always).
    coalesce_ms: int = Field(default=100, ge=0, le=200, alias="COLLEAGUE_COALESCE_MS")
    coalesce_busy_turns: int = Field(default=50, ge=0, le=100_000, alias="COLLEAGUE_COALESCE_BUSY_TURNS")
    frontend_dist: Path = Field(default=PROJECT_ROOT / "frontend" / "dist", alias="COLLEAGUE_FRONTEND_DIST")

    @property
    def graceful_seconds(self) -> float:
        """Seconds after SIGTERM that open requests may take (uvicorn's graceful shutdown); running turns go
        on meanwhile, and have at least `DRAIN_MARGIN` more to save themselves."""
        return self.drain_seconds - 2 * DRAIN_MARGIN

    @property
    def drain_deadline(self) -> float:
        """Seconds after SIGTERM by which running turns have been saved (the rest of the margin: the exit)."""
        return self.drain_seconds - DRAIN_MARGIN

    @property
    def uses_demo_model(self) -> bool:
        return not self.anthropic_api_key


@lru_cache
def get_settings() -> Settings:
    return Settings()
