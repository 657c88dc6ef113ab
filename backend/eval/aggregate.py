"""Trial-level agreement: the criterion benchmark's (patient, trial) verdicts against the experts'.

The verdict rule itself is the product's (`backend.screening.verdict`, where the spec's exclusion-label
inconsistency is resolved); the benchmark aggregates with it and compares here. Groups of the criterion
benchmark are never NOT_RELEVANT (no relevance is judged), so three labels are compared.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from backend.eval.metrics import accuracy, cohens_kappa, confusion_matrix
from backend.screening.models import TrialVerdict

TRIAL_LABELS: tuple[TrialVerdict, ...] = (
    TrialVerdict.ELIGIBLE, TrialVerdict.EXCLUDED, TrialVerdict.UNCERTAIN)


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
