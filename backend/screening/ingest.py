"""INGEST: a structured `PatientProfile` from a free-text note."""

from __future__ import annotations

import anthropic

from backend.screening.models import PatientProfile, Usage


async def extract_profile(note: str, client: anthropic.AsyncAnthropic | None = None,
                          model: str | None = None) -> tuple[PatientProfile, Usage]:
    """The note's profile. With a client: one model call (a reply that cannot be read falls back to the
    local rules); without one: the local rules alone."""
    raise NotImplementedError
