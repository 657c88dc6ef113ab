"""Bad input is refused where it enters, with a message the API can show (a 422)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from backend.screening.models import MAX_NOTE_CHARS, PatientInput, PatientProfile, ScreenRequest, note_version


@pytest.mark.parametrize("note", ["", "   \n\t ", "x" * (MAX_NOTE_CHARS + 1)])
def test_empty_blank_and_oversized_notes_are_refused(note: str) -> None:
    with pytest.raises(ValidationError):
        PatientInput(note=note, version="v1")


def test_the_refusal_does_not_echo_the_note() -> None:
    secret = "Jane Doe, 62, HER2-positive breast cancer " * 600
    with pytest.raises(ValidationError) as caught:
        PatientInput(note=secret, version="v1")
    assert "Jane Doe" not in str(caught.value.errors(include_input=False))


def test_screen_requests() -> None:
    assert ScreenRequest().mode == "search" and ScreenRequest().n == 20
    ids = ScreenRequest(nct_ids=[" nct01234567", "NCT01234567", "NCT07654321"])
    assert ids.mode == "nct_ids" and ids.nct_ids == ["NCT01234567", "NCT07654321"]
    for bad in ({"n": 0}, {"n": 101}, {"nct_ids": ["NCT123"]}, {"nct_ids": [f"NCT{i:08d}" for i in range(101)]},
                {"max_tool_calls": 0}, {"status": ["OPEN"]}):
        with pytest.raises(ValidationError):
            ScreenRequest(**bad)


def test_an_edited_profile_is_another_version() -> None:
    note = "A 50-year-old man with gout."
    edited = PatientProfile(age=50, sex="male", conditions=["gout"])
    assert note_version(note) == note_version(note) != note_version(note, edited)
    assert note_version(note) != note_version(note + " He smokes.")
