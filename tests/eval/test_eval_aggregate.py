from backend.eval.aggregate import compare_trial_verdicts
from backend.screening.models import TrialVerdict
from backend.screening.verdict import aggregate_by_trial


def test_expert_trial_verdicts_over_the_full_file(annotations):
    groups = aggregate_by_trial((a.patient_id, a.trial_id, a.criterion_type, a.expert_label)
                                for a in annotations)
    # 105 (patient, trial) pairs; counted independently with a throwaway script while writing this test
    assert len(groups) == 105
    counts = {v: list(groups.values()).count(v) for v in set(groups.values())}
    assert counts == {TrialVerdict.ELIGIBLE: 17, TrialVerdict.EXCLUDED: 26, TrialVerdict.UNCERTAIN: 62}


def test_compare_trial_verdicts():
    ref = {"a": TrialVerdict.ELIGIBLE, "b": TrialVerdict.EXCLUDED, "c": TrialVerdict.UNCERTAIN}
    pred = {"a": TrialVerdict.ELIGIBLE, "b": TrialVerdict.UNCERTAIN, "d": TrialVerdict.ELIGIBLE}
    out = compare_trial_verdicts(ref, pred)
    assert out["n_trials"] == 2 and out["accuracy"] == 0.5
    assert out["confusion_matrix"]["matrix"] == [[1, 0, 0], [0, 0, 1], [0, 0, 0]]
