"""The Prometheus metrics, one module-level object each (prometheus_client's own pattern).

Under `--workers N` every worker writes its values to files in `PROMETHEUS_MULTIPROC_DIR` (set by
`python -m backend serve` before the workers start, see `multiprocess_dir`) and `/metrics` sums them, so
any worker answers for all. prometheus_client chooses file-backed values when it is first imported, which
is why the directory is set in the parent before uvicorn spawns a worker. Gauges say how they combine
across workers (`livesum`: the live workers' values added up).

Everything here is recorded per request, per turn, per model call and per tool call, never per delta.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client import multiprocess as _multiprocess

HTTP_REQUESTS = Counter("colleague_http_requests", "HTTP requests by route template and status",
                        ["method", "route", "status"])
HTTP_DURATION = Histogram("colleague_http_request_duration_seconds",
                          "Time to the end of the response (a stream's whole life)", ["method", "route"],
                          buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300))
TURNS_STARTED = Counter("colleague_turns_started", "Chat turns started")
TURNS_ENDED = Counter("colleague_turns_ended",
                      "Chat turns ended: outcome completed|errored|stopped|interrupted; error is the code",
                      ["outcome", "error"])
TURNS_TAKEN_OVER = Counter("colleague_turns_taken_over", "Turns a worker went on with after another left them")
TIME_TO_FIRST_CHUNK = Histogram("colleague_turn_time_to_first_chunk_seconds",
                                "From a turn's start to the first answer text its readers get",
                                buckets=(0.1, 0.25, 0.5, 1, 1.5, 2, 3, 5, 8, 13, 20, 30, 60))
TURN_DURATION = Histogram("colleague_turn_duration_seconds", "A turn's whole generation", ["outcome"],
                          buckets=(0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600))
MODEL_CALL_DURATION = Histogram("colleague_model_call_duration_seconds",
                                "One Messages API call (gen_ai.client.operation.duration)", ["model", "outcome"],
                                buckets=(0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120, 300))
MODEL_TOKENS = Counter("colleague_model_tokens",
                       "Tokens billed (gen_ai.client.token.usage); type input|output|cache_read|cache_write",
                       ["model", "type"])
MODEL_COST = Counter("colleague_model_cost_usd", "Estimated cost of the tokens billed, USD (list prices)",
                     ["model"])
TOOL_CALL_DURATION = Histogram("colleague_tool_call_duration_seconds",
                               "Tool calls by tool and outcome (ok|error|cancelled), with their latency",
                               ["tool", "outcome"],
                               buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60))
TURNS_RUNNING = Gauge("colleague_turns_running", "Turns generating (open streams)", multiprocess_mode="livesum")
READERS = Gauge("colleague_stream_readers", "Connections reading a turn; where: local (its worker) or remote "
                "(from the database)", ["where"], multiprocess_mode="livesum")
CHECKPOINT_DURATION = Histogram("colleague_checkpoint_duration_seconds", "One checkpoint write of running turns",
                                buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5))
CHECKPOINT_BACKLOG = Gauge("colleague_checkpoint_backlog_turns",
                           "Turns with unsaved events in the latest checkpoint", multiprocess_mode="livesum")
AI_COLUMN_ROWS = Counter("colleague_ai_column_rows", "AI column rows evaluated, by outcome", ["outcome"])
SCREENINGS = Counter("colleague_screenings", "Screenings evaluated, by outcome", ["outcome"])
QUOTA_REFUSALS = Counter("colleague_quota_refusals", "Requests refused by a per-user limit", ["limit"])
WORKERS = Gauge("colleague_workers", "Live server workers", multiprocess_mode="livesum")

TOKEN_TYPES = {"input_tokens": "input", "output_tokens": "output", "cache_read_input_tokens": "cache_read",
               "cache_creation_input_tokens": "cache_write"}


def multiprocess_dir(workers: int) -> str | None:
    """Before the workers start: the directory their values go to (`PROMETHEUS_MULTIPROC_DIR`, else a fresh
    temporary one when there are several), emptied of a previous run's files."""
    path = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not path and workers > 1:
        path = tempfile.mkdtemp(prefix="colleague-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = path
    if path:
        Path(path).mkdir(parents=True, exist_ok=True)
        for old in Path(path).glob("*.db"):
            old.unlink()
    return path


def exposition() -> bytes:
    """The text format of every metric, summed over the workers when they share a directory."""
    path = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not path:
        from prometheus_client import REGISTRY
        return generate_latest(REGISTRY)
    registry = CollectorRegistry()
    _multiprocess.MultiProcessCollector(registry, path=path)
    return generate_latest(registry)


def worker_started() -> None:
    WORKERS.inc()


def worker_stopped() -> None:
    """A worker that shuts down takes its live gauges with it."""
    WORKERS.dec()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        _multiprocess.mark_process_dead(os.getpid())


def remove_multiprocess_dir(path: str | None) -> None:
    if path and path.startswith(tempfile.gettempdir()) and "colleague-metrics-" in path:
        shutil.rmtree(path, ignore_errors=True)
