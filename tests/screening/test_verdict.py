"""The trial verdict rule (moved from backend.eval) and the ranking score."""

import pytest

from backend.criteria.labels import Verdict
from backend.screening.models import TrialVerdict
from backend.screening.verdict import aggregate_by_trial, aggregate_trial

M, N, U = Verdict.MET, Verdict.NOT_MET, Verdict.UNKNOWN
INC, EXC = "inclusion", "exclusion"


def test_a_failed_inclusion_excludes():
    assert aggregate_trial([(INC, M), (INC, N), (EXC, M)]) == TrialVerdict.EXCLUDED


def test_a_triggered_exclusion_excludes():
    # "excluded" maps to NOT_MET (spec table), so an exclusion that applies is NOT_MET
    assert aggregate_trial([(INC, M), (EXC, N)]) == TrialVerdict.EXCLUDED


def test_all_inclusions_met_is_eligible_even_with_unknown_exclusions():
    # MET on an exclusion = "not excluded", which must not exclude
    assert aggregate_trial([(INC, M), (INC, M), (EXC, M), (EXC, U)]) == TrialVerdict.ELIGIBLE


def test_anything_else_is_uncertain():
    assert aggregate_trial([(INC, M), (INC, U), (EXC, M)]) == TrialVerdict.UNCERTAIN
    assert aggregate_trial([(EXC, M)]) == TrialVerdict.UNCERTAIN  # no inclusion seen: not vacuously eligible
    assert aggregate_trial([]) == TrialVerdict.UNCERTAIN


def test_exclusion_beats_uncertainty():
    assert aggregate_trial([(INC, U), (EXC, N)]) == TrialVerdict.EXCLUDED


def test_bad_criterion_type_raises():
    with pytest.raises(ValueError):
        aggregate_trial([("maybe", M)])


def test_grouping_by_patient_and_trial():
    rows = [("p1", "NCT1", INC, M), ("p1", "NCT1", EXC, M), ("p1", "NCT2", INC, N), ("p2", "NCT1", INC, U)]
    assert aggregate_by_trial(rows) == {("p1", "NCT1"): TrialVerdict.ELIGIBLE,
                                        ("p1", "NCT2"): TrialVerdict.EXCLUDED,
                                        ("p2", "NCT1"): TrialVerdict.UNCERTAIN}


