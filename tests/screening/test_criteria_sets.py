"""The blind criterion sets (benchmarks/data/criteria_sets/): well formed, and no exclusion a coordinator says does
not apply is judged to apply: a patient wrongly excluded is the costliest error the offline judge can make."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.screening.demo_judge import judge

SETS = sorted((Path(__file__).parents[2] / "benchmarks" / "data" / "criteria_sets").glob("*.jsonl"))


@pytest.mark.parametrize("path", SETS, ids=[p.stem for p in SETS])
def test_no_exclusion_applies_that_the_note_does_not_show(path: Path) -> None:
    notes = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(notes) >= 10
    wrongly_excluded = []
    for note in notes:
        for c in note["criteria"]:
            assert c["kind"] in ("inclusion", "exclusion")
            assert c["expected"] in (("yes", "no") if c["kind"] == "exclusion" else ("yes", "no", "unknown"))
            if c["kind"] == "exclusion" and c["expected"] == "no":
                if judge(note["note"], c["criterion"], "exclusion").answer == "yes":
                    wrongly_excluded.append(f"{c['id']}: {c['criterion']}")
    assert not wrongly_excluded


def test_the_four_sets_are_read() -> None:
    assert [p.stem for p in SETS] == ["set-c", "set-d", "set-e", "set-f"]  # a missing folder would skip the above
