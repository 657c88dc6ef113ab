"""`screen()`: the screening pipeline as an async generator of typed events (contract in the package
docstring)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anthropic

from backend.screening.models import JudgementCache, PatientInput, ScreeningEvent, ScreenRequest
from backend.sources import TrialsSource

DEFAULT_CONCURRENCY = 8


async def screen(patient: PatientInput, request: ScreenRequest, trials: TrialsSource,
                 client: anthropic.AsyncAnthropic, model: str, cache: JudgementCache, *,
                 concurrency: int = DEFAULT_CONCURRENCY) -> AsyncIterator[ScreeningEvent]:
    """Profile, candidates, one event per screened trial, then done (or a fatal error)."""
    raise NotImplementedError
    yield  # pragma: no cover
