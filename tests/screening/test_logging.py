"""No note text in the logs: an engine crash and a failing judgement cache are logged by exception type
(and place) only, whatever the exception's message, its cause or its traceback's values hold."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from pydantic import TypeAdapter

from backend.demo.transport import DEMO_MODEL_ID
from backend.screening import engine, screen
from backend.screening.models import MemoryJudgementCache, PatientInput, ScreenRequest
from tests.screening.trials import FakeTrials, trial

MARKER = "Zyxwvutsrqp-7781"  # appears in the note and nowhere else
NOTE = f"A 58-year-old man with type 2 diabetes, lives at {MARKER}. He denies chest pain. No history of stroke."
ELIGIBILITY = "Inclusion Criteria:\n\n* Type 2 diabetes\n\nExclusion Criteria:\n\n* History of stroke"


class _QuotingCache(MemoryJudgementCache):
    """A judgement cache whose database fails with the parameters in its message, as drivers do."""

    async def get(self, keys: Any) -> Any:
        raise RuntimeError(f"SELECT ... parameters: ({NOTE!r},)")

    async def put(self, items: Any) -> None:
        raise RuntimeError(f"INSERT ... parameters: {[j.reasoning for _, j in items]} {NOTE!r}")


def _formatted(records: list[logging.LogRecord]) -> str:
    """Every record as a handler would write it, its exception and stack included."""
    formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
    return "\n".join(formatter.format(r) + repr(r.args) for r in records)


def _validating_the_note(note: str, *_: Any) -> Any:
    return TypeAdapter(int).validate_python(note)  # a ValidationError whose text quotes its input


async def test_a_crash_is_logged_by_type_and_place_without_the_note(
        demo_client: Any, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "relevance_scores", _validating_the_note)
    trials = FakeTrials([trial("NCT00000001", ELIGIBILITY)])
    with caplog.at_level("DEBUG", logger="backend"):
        events: list[Any] = [e async for e in screen(PatientInput(note=NOTE, version="v1"),
                                          ScreenRequest(nct_ids=["NCT00000001"]), trials, demo_client,
                                          DEMO_MODEL_ID, MemoryJudgementCache())]
    assert [e.type for e in events] == ["profile", "error"]
    assert events[-1].code == "internal_error" and MARKER not in events[-1].message
    assert MARKER not in _formatted(caplog.records)
    crash = [r for r in caplog.records if "crashed" in r.getMessage()]
    assert crash and "ValidationError" in crash[0].getMessage() and "_validating_the_note" in crash[0].getMessage()


async def test_a_failing_cache_logs_no_note_text(demo_client: Any, caplog: pytest.LogCaptureFixture) -> None:
    trials = FakeTrials([trial("NCT00000001", ELIGIBILITY)])
    with caplog.at_level("DEBUG", logger="backend"):
        events: list[Any] = [e async for e in screen(PatientInput(note=NOTE, version="v1"),
                                          ScreenRequest(nct_ids=["NCT00000001"]), trials, demo_client,
                                          DEMO_MODEL_ID, _QuotingCache())]
    assert [e.type for e in events] == ["profile", "candidates", "trial", "done"]
    assert MARKER not in _formatted(caplog.records)
    assert {r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR} == {
        "reading cached judgements failed: RuntimeError", "caching judgements failed: RuntimeError"}
