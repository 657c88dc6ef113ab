import pytest

from backend.criteria.labels import Verdict
from backend.eval.aggregate import TrialVerdict, aggregate_by_trial, aggregate_trial, compare_trial_verdicts

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


def test_expert_trial_verdicts_over_the_full_file(annotations):
    groups = aggregate_by_trial((a.patient_id, a.trial_id, a.criterion_type, a.expert_label)
                                for a in annotations)
    # 105 (patient, trial) pairs; counted independently with a throwaway script while writing this test
    assert len(groups) == 105
    counts = {v: list(groups.values()).count(v) for v in TrialVerdict}
    assert counts == {TrialVerdict.ELIGIBLE: 17, TrialVerdict.EXCLUDED: 26, TrialVerdict.UNCERTAIN: 62}


def test_compare_trial_verdicts():
    ref = {"a": TrialVerdict.ELIGIBLE, "b": TrialVerdict.EXCLUDED, "c": TrialVerdict.UNCERTAIN}
    pred = {"a": TrialVerdict.ELIGIBLE, "b": TrialVerdict.UNCERTAIN, "d": TrialVerdict.ELIGIBLE}
    out = compare_trial_verdicts(ref, pred)
    assert out["n_trials"] == 2 and out["accuracy"] == 0.5
    assert out["confusion_matrix"]["matrix"] == [[1, 0, 0], [0, 0, 1], [0, 0, 0]]
