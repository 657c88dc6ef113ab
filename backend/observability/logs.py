"""Structured logs: every log line is one JSON object (structlog's `ProcessorFormatter` over the standard
`logging` calls the code already makes), with the ids bound in context variables — `request_id` (the HTTP
middleware), `user_id`, `conversation_id`, `turn_id` (the turn's task) — and the current `trace_id`.

What a line may carry: ids, counts, durations, codes, names of tools and models. Never a message's
text, a page's context or a patient note: the log calls pass ids and numbers, and a line's `extra` holds
only what those calls name.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

import structlog
from opentelemetry import trace

# Libraries whose DEBUG and INFO lines carry content: sse-starlette logs every chunk it sends (answers),
# the anthropic SDK its request options (the prompt), httpx/httpx2 the URLs of live searches. Whatever
# COLLEAGUE_LOG_LEVEL says, they log warnings and errors only.
CONTENT_LOGGERS = {name: "WARNING" for name in ("sse_starlette", "anthropic", "httpx", "httpx2", "httpcore",
                                                 "httpcore2")}


def quiet_content_loggers() -> None:
    """The content loggers' levels on the loggers themselves, so they hold under any runner and any
    root level (a DEBUG root, or `ANTHROPIC_LOG=debug`, would otherwise log prompts: patient notes)."""
    for name, level in CONTENT_LOGGERS.items():
        logger = logging.getLogger(name)
        if logger.level < logging.getLevelName(level):  # NOTSET (0) too: it would follow the root's level
            logger.setLevel(level)


def _trace_ids(_logger: Any, _name: str, event: dict[str, Any]) -> dict[str, Any]:
    context = trace.get_current_span().get_span_context()
    if context.is_valid:
        event["trace_id"] = format(context.trace_id, "032x")
        event["span_id"] = format(context.span_id, "016x")
    return event


def _drop_colours(_logger: Any, _name: str, event: dict[str, Any]) -> dict[str, Any]:
    event.pop("color_message", None)  # uvicorn's terminal copy of its message
    return event


def _pre_chain() -> list[Any]:
    return [structlog.contextvars.merge_contextvars, structlog.stdlib.add_log_level,
            structlog.stdlib.add_logger_name, structlog.stdlib.ExtraAdder(), _drop_colours,
            structlog.processors.TimeStamper(fmt="iso", utc=True), _trace_ids]


def formatter(fmt: str = "json") -> logging.Formatter:
    """The formatter of every handler (`fmt`: json, or console for a person at a terminal)."""
    renderer: Any = structlog.processors.JSONRenderer() if fmt == "json" else structlog.dev.ConsoleRenderer(
        colors=False)
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_pre_chain(),
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                    structlog.processors.format_exc_info, renderer])


def json_formatter() -> logging.Formatter:
    return formatter("json")


def console_formatter() -> logging.Formatter:
    return formatter("console")


def handler(stream: TextIO | None = None, fmt: str = "json") -> logging.Handler:
    h = logging.StreamHandler(stream or sys.stderr)
    h.setFormatter(formatter(fmt))
    return h


def uvicorn_log_config(fmt: str, level: str) -> dict[str, Any]:
    """`python -m backend serve`'s logging, applied by uvicorn in every worker: one stderr handler on the
    root logger, uvicorn's loggers (access log included) propagating to it. Only names, so it pickles
    into spawned workers."""
    factory = "backend.observability.logs.json_formatter" if fmt == "json" else \
        "backend.observability.logs.console_formatter"
    return {
        "version": 1, "disable_existing_loggers": False,
        "formatters": {"structured": {"()": factory}},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "structured",
                                "stream": "ext://sys.stderr"}},
        "root": {"handlers": ["stderr"], "level": level.upper()},
        "loggers": {**{name: {"handlers": [], "propagate": True, "level": level.upper()}
                       for name in ("uvicorn", "uvicorn.error", "uvicorn.access")},
                    **{name: {"level": quiet} for name, quiet in CONTENT_LOGGERS.items()}},
    }
