"""The trial verdict and the ranking score, from the criterion results of one (patient, trial) pair.

The rule (issue 25; spec diagram 4): a patient who fails an inclusion criterion or triggers an exclusion
criterion is EXCLUDED; one who meets every inclusion criterion and triggers no exclusion is ELIGIBLE;
anything else is UNCERTAIN. A trial whose topic does not match the patient at all is NOT_RELEVANT, and one
without eligibility text is UNCERTAIN with that reason (the engine says so).

The spec's inconsistency, resolved once: diagram 4 says "any MET exclusion → EXCLUDED", but the spec's label
table maps "excluded" (the exclusion applies) to NOT_MET and "not excluded" to MET, so labels are read from
the patient's side (`backend.criteria.labels`). A triggered exclusion is therefore an exclusion criterion
labelled NOT_MET. Reading the diagram literally against the table would exclude the patient from nearly every
trial: almost every trial has an exclusion the patient is "not excluded" by (98 of the 105 expert-labelled
pairs in the TrialGPT set).

A group with no inclusion criterion at all is UNCERTAIN, not vacuously ELIGIBLE.

The score (higher first) follows TrialGPT-Ranking's linear combination of criterion fractions, plus the
trial's relevance to the patient: relevance + W_MET·(inclusions met) − W_NOT_MET·(inclusions failed)
− W_EXCLUDED·(exclusions that apply), the fractions over each kind's count, less a step for a failed
inclusion (INCLUSION_FAILED) and one for an exclusion that applies (EXCLUSION_APPLIES): one failed criterion
excludes the patient however many others there are.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from backend.criteria.labels import Verdict
from backend.screening.models import CriterionResult, TrialVerdict

NOT_RELEVANT_BELOW = 0.05  # relevance (0..1) under which a trial's topic does not match the patient
# Weights from the TREC 2021 dev pool, checked on SIGIR (benchmarks/README.md): the steps trade a little
# NDCG@10 for separating excluded from eligible trials.
W_MET = 0.1
W_NOT_MET = 0.15
W_EXCLUDED = 0.0
INCLUSION_FAILED = 0.4
EXCLUSION_APPLIES = 0.3


def aggregate_trial(criteria: Iterable[tuple[str, Verdict]]) -> TrialVerdict:
    """`criteria` holds (criterion_type, verdict) pairs of one patient and one trial → ELIGIBLE, EXCLUDED
    or UNCERTAIN (relevance is not this function's business)."""
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


def trial_verdict(results: Sequence[CriterionResult], relevance: float) -> TrialVerdict:
    if relevance < NOT_RELEVANT_BELOW:
        return TrialVerdict.NOT_RELEVANT
    return aggregate_trial((r.criterion.kind, r.label) for r in results)


def ranking_score(results: Sequence[CriterionResult], relevance: float) -> float:
    inclusions = [r.label for r in results if r.criterion.kind == "inclusion"]
    exclusions = [r.label for r in results if r.criterion.kind == "exclusion"]
    n_inc, n_exc = max(1, len(inclusions)), max(1, len(exclusions))
    failed, applying = inclusions.count(Verdict.NOT_MET), exclusions.count(Verdict.NOT_MET)
    score = (relevance + W_MET * inclusions.count(Verdict.MET) / n_inc - W_NOT_MET * failed / n_inc
             - W_EXCLUDED * applying / n_exc - INCLUSION_FAILED * (failed > 0) - EXCLUSION_APPLIES * (applying > 0))
    return round(score, 6)
