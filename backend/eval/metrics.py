"""Agreement metrics between a reference labelling (the experts) and a prediction: pure functions.

Conventions, fixed here so every number in a run means one thing:
- confusion matrices have the reference on rows and the prediction on columns;
- a precision, recall or F1 whose denominator is zero is 0.0 (scikit-learn's `zero_division=0`);
- macro F1 averages over the labels present in either sequence (scikit-learn's default), while
  `f1_met_not_met` always averages exactly F1(MET) and F1(NOT_MET), the two decisive verdicts;
- accuracy and Cohen's kappa of empty input are None, and so is kappa when chance agreement is 1
  (both sides used one and the same label throughout: kappa is undefined there, not 0 or 1).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from backend.criteria.labels import Verdict

VERDICT_LABELS: tuple[Verdict, ...] = (Verdict.MET, Verdict.NOT_MET, Verdict.UNKNOWN)


def _check_lengths(y_true: Sequence[Any], y_pred: Sequence[Any]) -> None:
    if len(y_true) != len(y_pred):
        raise ValueError(f"y_true has {len(y_true)} labels but y_pred has {len(y_pred)}")


def safe_div(numerator: float, denominator: float) -> float:
    """numerator / denominator, or 0.0 when the denominator is zero."""
    return numerator / denominator if denominator else 0.0


def accuracy(y_true: Sequence[Hashable], y_pred: Sequence[Hashable]) -> float | None:
    _check_lengths(y_true, y_pred)
    if not y_true:
        return None
    return sum(t == p for t, p in zip(y_true, y_pred, strict=True)) / len(y_true)


def confusion_matrix(y_true: Sequence[Hashable], y_pred: Sequence[Hashable],
                     labels: Sequence[Hashable] = VERDICT_LABELS) -> list[list[int]]:
    """matrix[i][j] = how many items have reference labels[i] and prediction labels[j]."""
    _check_lengths(y_true, y_pred)
    index = {label: i for i, label in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    for t, p in zip(y_true, y_pred, strict=True):
        if t not in index or p not in index:
            raise ValueError(f"label {t if t not in index else p!r} is not one of {list(labels)}")
        matrix[index[t]][index[p]] += 1
    return matrix


def per_class_scores(y_true: Sequence[Hashable], y_pred: Sequence[Hashable],
                     labels: Sequence[Hashable] = VERDICT_LABELS) -> dict[Hashable, dict[str, float]]:
    """{label: {precision, recall, f1, support}} with zero denominators giving 0.0."""
    matrix = confusion_matrix(y_true, y_pred, labels)
    scores: dict[Hashable, dict[str, float]] = {}
    for i, label in enumerate(labels):
        tp = matrix[i][i]
        predicted = sum(row[i] for row in matrix)
        support = sum(matrix[i])
        precision = safe_div(tp, predicted)
        recall = safe_div(tp, support)
        scores[label] = {"precision": precision, "recall": recall,
                         "f1": safe_div(2 * precision * recall, precision + recall), "support": support}
    return scores


def macro_f1(y_true: Sequence[Hashable], y_pred: Sequence[Hashable],
             labels: Sequence[Hashable] | None = None) -> float:
    """Unweighted mean of per-class F1 over `labels`, by default the labels present in either input."""
    if labels is None:
        present = set(y_true) | set(y_pred)
        labels = [label for label in VERDICT_LABELS if label in present]
        labels += sorted((label for label in present if label not in labels), key=str)
    if not labels:
        return 0.0
    scores = per_class_scores(y_true, y_pred, labels)
    return sum(scores[label]["f1"] for label in labels) / len(labels)


def f1_met_not_met(y_true: Sequence[Verdict], y_pred: Sequence[Verdict]) -> float:
    """Mean of F1(MET) and F1(NOT_MET), both always counted; UNKNOWN still costs recall/precision there."""
    scores = per_class_scores(y_true, y_pred, VERDICT_LABELS)
    return (scores[Verdict.MET]["f1"] + scores[Verdict.NOT_MET]["f1"]) / 2


def cohens_kappa(y_true: Sequence[Hashable], y_pred: Sequence[Hashable],
                 labels: Sequence[Hashable] | None = None) -> float | None:
    """(p_o - p_e) / (1 - p_e), with p_e from each side's marginal label frequencies."""
    _check_lengths(y_true, y_pred)
    n = len(y_true)
    if n == 0:
        return None
    if labels is None:
        labels = sorted(set(y_true) | set(y_pred), key=str)
    matrix = confusion_matrix(y_true, y_pred, labels)
    observed = sum(matrix[i][i] for i in range(len(labels))) / n
    expected = sum(sum(matrix[i]) * sum(row[i] for row in matrix) for i in range(len(labels))) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def compute_metrics(y_true: Sequence[Verdict], y_pred: Sequence[Verdict]) -> dict[str, Any]:
    """All criterion-level metrics as one JSON-ready dict (labels as strings)."""
    scores = per_class_scores(y_true, y_pred, VERDICT_LABELS)
    return {
        "n": len(y_true),
        "accuracy": accuracy(y_true, y_pred),
        "macro_f1": macro_f1(y_true, y_pred) if y_true else None,
        "f1_met_not_met": f1_met_not_met(y_true, y_pred) if y_true else None,
        "cohens_kappa": cohens_kappa(y_true, y_pred, VERDICT_LABELS),
        "per_class": {str(label): s for label, s in scores.items()},
        "confusion_matrix": {"labels": [str(label) for label in VERDICT_LABELS],
                             "rows": "expert", "columns": "prediction",
                             "matrix": confusion_matrix(y_true, y_pred, VERDICT_LABELS)},
    }
