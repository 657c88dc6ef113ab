"""Trial-level aggregation: one (patient, trial) verdict from its criterion verdicts.

The rule (issue, and spec diagram 4): a patient who fails an inclusion criterion or triggers an
exclusion criterion is EXCLUDED; one who meets every inclusion criterion (and triggers no exclusion) is
ELIGIBLE; anything else is UNCERTAIN.

How "triggers an exclusion" is read: the spec's label table maps "excluded" (the exclusion applies) to
NOT_MET and "not excluded" to MET, so verdicts are from the patient's side (see `backend.criteria.labels`). A triggered
exclusion is therefore an exclusion criterion with verdict NOT_MET. Reading "MET exclusion → EXCLUDED"
literally against that table would exclude the patient from nearly every trial, because almost every
trial has some exclusion the patient is "not excluded" by (98 of the 105 expert-labelled pairs).

A group with no inclusion criterion at all is UNCERTAIN, not vacuously ELIGIBLE: in a sampled run most
groups hold only a few of their trial's criteria.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any

from backend.criteria.labels import Verdict
from backend.eval.metrics import accuracy, cohens_kappa, confusion_matrix


class TrialVerdict(StrEnum):
    ELIGIBLE = "ELIGIBLE"
    EXCLUDED = "EXCLUDED"
    UNCERTAIN = "UNCERTAIN"


TRIAL_LABELS: tuple[TrialVerdict, ...] = (
    TrialVerdict.ELIGIBLE, TrialVerdict.EXCLUDED, TrialVerdict.UNCERTAIN)


def aggregate_trial(criteria: Iterable[tuple[str, Verdict]]) -> TrialVerdict:
    """`criteria` holds (criterion_type, verdict) pairs of one patient and one trial."""
    inclusions: list[Verdict] = []
    for criterion_type, verdict in criteria:
        if criterion_type not in ("inclusion", "exclusion"):
            raise ValueError(f"criterion_type must be inclusion or exclusion, not {criterion_type!r}")
        if verdict == Verdict.NOT_MET:  # a failed inclusion, or an exclusion that applies
            return TrialVerdict.EXCLUDED
        if criterion_type == "inclusion":
            inclusions.append(verdict)
    if inclusions and all(v == Verdict.MET for v in inclusions):
        return TrialVerdict.ELIGIBLE
    return TrialVerdict.UNCERTAIN


def aggregate_by_trial(rows: Iterable[tuple[str, str, str, Verdict]]) -> dict[tuple[str, str], TrialVerdict]:
    """rows: (patient_id, trial_id, criterion_type, verdict) → {(patient_id, trial_id): TrialVerdict}."""
    groups: dict[tuple[str, str], list[tuple[str, Verdict]]] = {}
    for patient_id, trial_id, criterion_type, verdict in rows:
        groups.setdefault((patient_id, trial_id), []).append((criterion_type, verdict))
    return {key: aggregate_trial(criteria) for key, criteria in sorted(groups.items())}


def compare_trial_verdicts(reference: Mapping[Any, TrialVerdict],
                           predicted: Mapping[Any, TrialVerdict]) -> dict[str, Any]:
    """Trial-level agreement over the groups both sides have."""
    keys: Sequence[Hashable] = [k for k in reference if k in predicted]
    y_true = [reference[k] for k in keys]
    y_pred = [predicted[k] for k in keys]
    return {
        "n_trials": len(keys),
        "accuracy": accuracy(y_true, y_pred),
        "cohens_kappa": cohens_kappa(y_true, y_pred, TRIAL_LABELS),
        "reference_counts": {str(v): y_true.count(v) for v in TRIAL_LABELS},
        "predicted_counts": {str(v): y_pred.count(v) for v in TRIAL_LABELS},
        "confusion_matrix": {"labels": [str(v) for v in TRIAL_LABELS], "rows": "expert",
                             "columns": "prediction",
                             "matrix": confusion_matrix(y_true, y_pred, TRIAL_LABELS)},
    }
