"""Metrics against values computed by hand (the arithmetic is in the comments)."""

import pytest

from backend.criteria.labels import Verdict
from backend.eval.metrics import (
    accuracy,
    cohens_kappa,
    compute_metrics,
    confusion_matrix,
    f1_met_not_met,
    macro_f1,
    per_class_scores,
    safe_div,
)

M, N, U = Verdict.MET, Verdict.NOT_MET, Verdict.UNKNOWN

# Ten pairs. Rows = expert, columns = prediction, order MET, NOT_MET, UNKNOWN:
#   expert MET     (items 0,1,2,8): predicted M, M, U, M  -> [3, 0, 1]
#   expert NOT_MET (items 3,4,9):   predicted N, M, N     -> [1, 2, 0]
#   expert UNKNOWN (items 5,6,7):   predicted U, M, U     -> [1, 0, 2]
Y_TRUE = [M, M, M, N, N, U, U, U, M, N]
Y_PRED = [M, M, U, N, M, U, M, U, M, N]


def test_confusion_matrix_rows_are_reference_columns_prediction():
    assert confusion_matrix(Y_TRUE, Y_PRED) == [[3, 0, 1], [1, 2, 0], [1, 0, 2]]


def test_accuracy():
    # diagonal 3 + 2 + 2 = 7 of 10
    assert accuracy(Y_TRUE, Y_PRED) == pytest.approx(0.7)


def test_per_class_precision_recall_f1():
    s = per_class_scores(Y_TRUE, Y_PRED)
    # MET: tp 3, predicted MET 3+1+1 = 5 -> P 0.6; support 4 -> R 0.75; F1 = 2*.6*.75/1.35 = 2/3
    assert (s[M]["precision"], s[M]["recall"], s[M]["support"]) == (pytest.approx(0.6), 0.75, 4)
    assert s[M]["f1"] == pytest.approx(2 / 3)
    # NOT_MET: tp 2, predicted 2 -> P 1; support 3 -> R 2/3; F1 = 2*(2/3)/(5/3) = 0.8
    assert (s[N]["precision"], s[N]["recall"], s[N]["f1"]) == (1.0, pytest.approx(2 / 3), pytest.approx(0.8))
    # UNKNOWN: tp 2, predicted 3 -> P 2/3; support 3 -> R 2/3; F1 2/3
    assert s[U]["f1"] == pytest.approx(2 / 3)


def test_macro_f1_and_f1_over_met_not_met():
    # (2/3 + 4/5 + 2/3) / 3 = (10/15 + 12/15 + 10/15) / 3 = 32/45
    assert macro_f1(Y_TRUE, Y_PRED) == pytest.approx(32 / 45)
    # (2/3 + 4/5) / 2 = 22/30 = 11/15
    assert f1_met_not_met(Y_TRUE, Y_PRED) == pytest.approx(11 / 15)


def test_cohens_kappa():
    # p_o = 0.7. Expert marginals M 4, N 3, U 3; predicted marginals M 5, N 2, U 3.
    # p_e = (4*5 + 3*2 + 3*3) / 10^2 = 35/100.  kappa = (0.7 - 0.35) / (1 - 0.35) = 0.35/0.65 = 7/13
    assert cohens_kappa(Y_TRUE, Y_PRED) == pytest.approx(7 / 13)


def test_kappa_of_total_disagreement_is_minus_one():
    # p_o = 0; marginals 1/1 on both sides -> p_e = (1*1 + 1*1)/4 = 0.5 -> (0 - .5)/(1 - .5) = -1
    assert cohens_kappa([M, N], [N, M]) == pytest.approx(-1.0)


def test_zero_divisions_are_explicit():
    assert safe_div(1, 0) == 0.0
    s = per_class_scores([M, M], [M, M])
    # NOT_MET never appears: precision 0/0, recall 0/0, F1 0/0 -> all 0.0
    assert s[N] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 0}
    # macro F1 over the labels present (only MET): 1.0; F1 MET/NOT_MET always counts both: (1 + 0)/2
    assert macro_f1([M, M], [M, M]) == 1.0
    assert f1_met_not_met([M, M], [M, M]) == 0.5
    # one label on both sides: p_e = 1, kappa = 0/0 -> undefined (None), not 0 or 1
    assert cohens_kappa([M, M], [M, M]) is None


def test_empty_input():
    assert accuracy([], []) is None
    assert cohens_kappa([], []) is None
    m = compute_metrics([], [])
    assert m["n"] == 0 and m["accuracy"] is None and m["macro_f1"] is None and m["cohens_kappa"] is None
    assert m["confusion_matrix"]["matrix"] == [[0, 0, 0]] * 3


def test_length_mismatch_and_unknown_labels_raise():
    with pytest.raises(ValueError, match="y_true has 2"):
        accuracy([M, N], [M])
    with pytest.raises(ValueError, match="not one of"):
        confusion_matrix(["maybe"], [M])


def test_compute_metrics_is_json_ready():
    m = compute_metrics(Y_TRUE, Y_PRED)
    assert m["n"] == 10
    assert m["accuracy"] == pytest.approx(0.7)
    assert m["macro_f1"] == pytest.approx(32 / 45)
    assert m["f1_met_not_met"] == pytest.approx(11 / 15)
    assert m["cohens_kappa"] == pytest.approx(7 / 13)
    assert m["confusion_matrix"] == {"labels": ["MET", "NOT_MET", "UNKNOWN"], "rows": "expert",
                                     "columns": "prediction", "matrix": [[3, 0, 1], [1, 2, 0], [1, 0, 2]]}
    assert set(m["per_class"]) == {"MET", "NOT_MET", "UNKNOWN"}
