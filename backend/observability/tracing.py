"""OpenTelemetry traces, off unless an OTLP endpoint is configured (the standard `OTEL_*` variables).

Our own spans follow the GenAI semantic conventions as of semantic-conventions v1.41.0 (the last release
that held them, schema https://opentelemetry.io/schemas/1.41.0; status Development): a turn is
`invoke_agent Colleague`, each Messages API call under it `chat {model}` (CLIENT) and each tool call
`execute_tool {name}`, with usage and finish reasons as attributes. FastAPI, SQLAlchemy and httpx (the live
sources) are traced by the official instrumentations; the `anthropic` SDK talks through httpx2, which
they do not cover. The SDK can trace its own calls (`anthropic.messages.create`), but it does work for
every streamed event to fill that span, which our `chat` span already covers once per call: it is off
(`ANTHROPIC_OPEN_TELEMETRY=false`) unless the environment turns it on, and then its span is a child of
ours (`ModelCall.traced`) and its content mode is the SDK's own setting.

Content (prompts, answers, tool inputs and results) is recorded only with `COLLEAGUE_OTEL_CAPTURE_CONTENT`:
it holds patient notes and unpublished research, and a trace backend is rarely cleared for either.
"""

from __future__ import annotations

import os
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

SCHEMA_URL = "https://opentelemetry.io/schemas/1.41.0"
SCOPE = "colleague"

_provider: TracerProvider | None = None
_tracer: trace.Tracer | None = None
capture_content = False


def otlp_configured() -> bool:
    return bool(os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) \
        and os.environ.get("OTEL_SDK_DISABLED", "").lower() != "true"


def setup_from_environment() -> TracerProvider | None:
    """Once per process: a provider exporting over OTLP/HTTP when an endpoint is set (else tracing stays off)."""
    if _provider is not None or not otlp_configured():
        return _provider
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    provider = TracerProvider(resource=Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME",
                                                                                       "colleague")}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    use_provider(provider)
    trace.set_tracer_provider(provider)  # for a library that traces through the global provider
    os.environ.setdefault("ANTHROPIC_OPEN_TELEMETRY", "false")  # read by each SDK client when it is made
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
    HTTPXClientInstrumentor().instrument(tracer_provider=provider)
    return provider


def use_provider(provider: TracerProvider | None) -> None:
    """Our spans go to `provider` (None: tracing off). Tests hand in one with an in-memory exporter."""
    global _provider, _tracer
    _provider = provider
    _tracer = provider.get_tracer(SCOPE, schema_url=SCHEMA_URL) if provider is not None else None


def tracer() -> trace.Tracer | None:
    return _tracer


def instrument_app(app: Any, engine: Any, sql: bool) -> None:
    """FastAPI's requests, and with `sql` (COLLEAGUE_OTEL_SQL) this app's SQL statements, when tracing is on.
    A turn runs some twenty statements, and a span for each made tracing cost noticeably more CPU per
    streamed delta (benchmarks/README.md, "Metrics and tracing"), so they are traced only when asked."""
    if _provider is None:
        return
    from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
    from opentelemetry.instrumentation.sqlalchemy import SQLAlchemyInstrumentor
    # Without `exclude_spans` the ASGI instrumentation makes a span of every `send`: one per streamed delta.
    FastAPIInstrumentor.instrument_app(app, tracer_provider=_provider, excluded_urls="metrics,api/health",
                                       exclude_spans=["receive", "send"])
    if not sql:
        return
    # The instrumentation declares sqlalchemy < 2.1 (it has not been re-released since); what it uses, the
    # engine's cursor-execute events, is unchanged in 2.1, so its version check is skipped.
    SQLAlchemyInstrumentor().instrument(engine=engine, tracer_provider=_provider, skip_dep_check=True)

