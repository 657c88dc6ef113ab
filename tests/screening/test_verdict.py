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




def _results(*pairs: tuple[str, Verdict]) -> list:
    from backend.screening.models import Criterion, CriterionResult
    return [CriterionResult(criterion=Criterion(kind=kind, index=i, text=f"c{i}"), label=label)  # type: ignore[arg-type]
            for i, (kind, label) in enumerate(pairs)]


def test_a_trial_off_the_patients_topic_is_not_relevant_whatever_its_criteria_say():
    from backend.screening.verdict import NOT_RELEVANT_BELOW, trial_verdict
    results = _results((INC, M), (EXC, M))
    assert trial_verdict(results, relevance=0.0) == TrialVerdict.NOT_RELEVANT
    assert trial_verdict(results, relevance=NOT_RELEVANT_BELOW) == TrialVerdict.ELIGIBLE


def test_the_score_orders_eligible_over_uncertain_over_excluded_at_equal_relevance():
    from backend.screening.verdict import ranking_score
    def score(*pairs):
        return ranking_score(_results(*pairs), 0.5)
    eligible, uncertain = score((INC, M), (EXC, M)), score((INC, U), (EXC, M))
    failed, excluded = score((INC, N), (EXC, M)), score((INC, M), (EXC, N))
    assert eligible >= uncertain > failed and uncertain > excluded
    assert score((INC, M), (EXC, M)) < ranking_score(_results((INC, M), (EXC, M)), 0.9)


def test_one_failed_criterion_costs_a_step_however_many_criteria_the_trial_lists():
    from backend.screening.verdict import ranking_score
    many_met = [(INC, M)] * 9
    one_of_ten = ranking_score(_results(*many_met, (INC, N), (EXC, M)), 0.5)
    one_of_two = ranking_score(_results((INC, M), (INC, N), (EXC, M)), 0.5)
    uncertain = ranking_score(_results((INC, U), (EXC, M)), 0.5)
    assert one_of_ten < uncertain - 0.3 and one_of_two < uncertain - 0.3
