"""The criterion eval harness: sample annotated pairs, ask the evaluator about each one under a budget
with bounded concurrency, score the verdicts against the experts next to the GPT-4 baseline, and write
the run's artifacts (spec diagram 3, "Phase 0 Benchmark").

Failure policy, so a run never dies half-written: an API or transport error on one pair is recorded on
that pair (as `classify_api_error` reads it) and the run goes on; a spent budget, a refused key, a
forbidden or unknown model (`ApiFailure.affects_every_call`: every other call would fail the same way)
stops new calls and the remaining pairs
are recorded as skipped with that reason. The budget guard does the same when a cap is reached.
"""

from __future__ import annotations

import asyncio
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anthropic
from tqdm import tqdm

from backend.agent.errors import API_ERRORS, classify_api_error
from backend.criteria.evaluator import DEFAULT_MAX_TOKENS, CallUsage, evaluate_criterion
from backend.eval.aggregate import compare_trial_verdicts
from backend.eval.artifacts import config_snapshot, write_run
from backend.eval.dataset import CriterionAnnotation, load_annotations, sentence_indices, stratified_sample
from backend.eval.metrics import accuracy, compute_metrics
from backend.eval.run import Budget, EvalConfig, PairOutcome, RunReport
from backend.screening.verdict import aggregate_by_trial


class BudgetGuard:
    """Decides, before each call, whether it may start; remembers why the run stopped starting calls."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.calls_started = 0
        self.tokens_used = 0
        self.stopped_reason: str | None = None

    def try_start(self) -> str | None:
        """None if a call may start now (and counts it), else the reason it may not."""
        if self.stopped_reason is None:
            b = self.budget
            if b.max_calls is not None and self.calls_started >= b.max_calls:
                self.stopped_reason = f"budget: max_calls={b.max_calls} reached"
            elif b.max_tokens is not None and self.tokens_used >= b.max_tokens:
                self.stopped_reason = f"budget: max_tokens={b.max_tokens} reached ({self.tokens_used} used)"
        if self.stopped_reason is not None:
            return self.stopped_reason
        self.calls_started += 1
        return None

    def record(self, usage: CallUsage) -> None:
        self.tokens_used += usage.input_tokens + usage.output_tokens

    def abort(self, reason: str) -> None:
        self.stopped_reason = self.stopped_reason or reason


async def evaluate_pairs(client: anthropic.AsyncAnthropic, model: str, pairs: list[CriterionAnnotation], *,
                         concurrency: int, guard: BudgetGuard, max_output_tokens: int = DEFAULT_MAX_TOKENS,
                         progress: bool = True) -> list[PairOutcome]:
    """Evaluate `pairs` with at most `concurrency` requests in flight; outcomes keep the input order."""
    if concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    semaphore = asyncio.Semaphore(concurrency)
    bar = tqdm(total=len(pairs), desc="criteria", unit="pair", file=sys.stderr, disable=not progress,
               dynamic_ncols=True)

    async def one(index: int, ann: CriterionAnnotation) -> PairOutcome:
        async with semaphore:
            refused = guard.try_start()
            if refused is not None:
                outcome = PairOutcome(index, ann, "skipped", reason=refused)
            else:
                outcome = await _call(index, ann)
        bar.update(1)
        bar.set_postfix_str(f"tokens={guard.tokens_used}", refresh=False)
        return outcome

    async def _call(index: int, ann: CriterionAnnotation) -> PairOutcome:
        try:
            verdict, usage = await evaluate_criterion(client, model, ann.criterion_text or "",
                                                      ann.criterion_type, ann.note,
                                                      max_tokens=max_output_tokens)
        except API_ERRORS as exc:
            failure = classify_api_error(exc)
            reason = f"{failure.code}: {failure.message}"
            if failure.affects_every_call:
                guard.abort(f"stopped: {reason}")
            return PairOutcome(index, ann, "error", reason=reason)
        guard.record(usage)
        return PairOutcome(index, ann, "evaluated", verdict=verdict, usage=usage)

    try:
        return list(await asyncio.gather(*(one(i, a) for i, a in enumerate(pairs))))
    finally:
        bar.close()


def gpt4_baseline(annotations: list[CriterionAnnotation]) -> dict[str, Any]:
    """GPT-4's labels in the dataset scored against the experts': no model calls."""
    y_true = [a.expert_label for a in annotations]
    y_gpt4 = [a.gpt4_label for a in annotations]
    metrics = compute_metrics(y_true, y_gpt4)
    metrics["raw_label_agreement"] = accuracy([a.expert_label_raw for a in annotations],
                                              [a.gpt4_label_raw for a in annotations])
    metrics["trial_level"] = _trial_level(annotations, [a.gpt4_label for a in annotations])
    return metrics


def _trial_level(annotations: list[CriterionAnnotation], predicted: list[Any]) -> dict[str, Any]:
    expert = aggregate_by_trial((a.patient_id, a.trial_id, a.criterion_type, a.expert_label)
                                for a in annotations)
    other = aggregate_by_trial((a.patient_id, a.trial_id, a.criterion_type, v)
                               for a, v in zip(annotations, predicted, strict=True))
    return compare_trial_verdicts(expert, other)


def _evidence_recall(pairs: list[tuple[list[int], list[int]]]) -> dict[str, Any]:
    """Mean share of the experts' evidence sentences that the prediction also cites."""
    scored = [len(set(pred) & set(ref)) / len(set(ref)) for pred, ref in pairs if ref]
    return {"n": len(scored), "mean_recall": sum(scored) / len(scored) if scored else None}


def build_metrics(outcomes: list[PairOutcome], all_annotations: list[CriterionAnnotation]) -> dict[str, Any]:
    done = [o for o in outcomes if o.status == "evaluated" and o.verdict is not None]
    anns = [o.annotation for o in done]
    y_true = [a.expert_label for a in anns]
    model_labels = [o.verdict.label for o in done if o.verdict is not None]
    model = compute_metrics(y_true, model_labels)
    model["trial_level"] = _trial_level(anns, model_labels)
    model["evidence"] = _evidence_recall([(sentence_indices(o.annotation.note, o.verdict.evidence),
                                           o.annotation.expert_sentences) for o in done if o.verdict])
    model["unparseable_replies"] = sum(1 for o in done if o.verdict and o.verdict.parse_error)
    same = compute_metrics(y_true, [a.gpt4_label for a in anns])
    same["raw_label_agreement"] = accuracy([a.expert_label_raw for a in anns],
                                           [a.gpt4_label_raw for a in anns])
    same["trial_level"] = _trial_level(anns, [a.gpt4_label for a in anns])
    same["evidence"] = _evidence_recall([(a.gpt4_sentences, a.expert_sentences) for a in anns])
    return {
        "counts": {"planned": len(outcomes), "evaluated": len(done),
                   "errors": sum(o.status == "error" for o in outcomes),
                   "skipped": sum(o.status == "skipped" for o in outcomes)},
        "model": model,
        "gpt4_same_pairs": same,
        "gpt4_full_file": gpt4_baseline(all_annotations),
        "notes": [
            "model and gpt4_same_pairs are scored on the evaluated pairs only; "
            "gpt4_full_file on every row.",
            "trial_level compares verdicts aggregated over the same criteria on both sides "
            "(see backend/screening/verdict.py).",
        ],
    }


def build_cost_summary(config: EvalConfig, outcomes: list[PairOutcome], guard: BudgetGuard,
                       wall_time_s: float) -> dict[str, Any]:
    usages = [o.usage for o in outcomes if o.usage is not None]
    costs = [u.estimated_cost_usd for u in usages]
    if config.model_kind == "demo":
        total_cost: float | None = 0.0
    else:
        total_cost = None if any(c is None for c in costs) else round(sum(c or 0.0 for c in costs), 6)
    return {
        "model": config.model,
        "model_kind": config.model_kind,
        "total_pairs": len(usages),
        "total_cost_usd": total_cost,
        "total_input_tokens": sum(u.input_tokens for u in usages),
        "total_output_tokens": sum(u.output_tokens for u in usages),
        "avg_latency_ms": round(sum(u.latency_ms for u in usages) / len(usages), 3) if usages else None,
        "max_latency_ms": max((u.latency_ms for u in usages), default=None),
        "token_counts_estimated": config.model_kind == "demo" or any(u.token_count_estimated for u in usages),
        "calls_started": guard.calls_started,
        "pairs_planned": len(outcomes),
        "pairs_errored": sum(o.status == "error" for o in outcomes),
        "pairs_skipped": sum(o.status == "skipped" for o in outcomes),
        "skipped_annotation_ids": [o.annotation.annotation_id for o in outcomes if o.status == "skipped"],
        "stopped_reason": guard.stopped_reason,
        "budget": {"max_calls": config.budget.max_calls, "max_tokens": config.budget.max_tokens},
        "concurrency": config.concurrency,
        "wall_time_s": round(wall_time_s, 3),
    }


def new_run_id(out_dir: Path, model_kind: str, model: str, now: datetime | None = None) -> str:
    """`phase0-<model>-<YYYYMMDD-HHMMSS>` (the spec's form), with a suffix if that directory exists."""
    slug = "demo" if model_kind == "demo" else "".join(c if c.isalnum() or c in "-." else "-" for c in model)
    base = f"phase0-{slug}-{(now or datetime.now(UTC)).strftime('%Y%m%d-%H%M%S')}"
    run_id, n = base, 1
    while (out_dir / run_id).exists():
        n += 1
        run_id = f"{base}-{n}"
    return run_id


async def run_criteria_eval(client: anthropic.AsyncAnthropic, config: EvalConfig, *, progress: bool = True,
                            argv: list[str] | None = None,
                            annotations: list[CriterionAnnotation] | None = None) -> RunReport:
    """Sample, evaluate, score, and write `config.out_dir/<run_id>/` (the five spec artifacts)."""
    all_annotations = annotations if annotations is not None else load_annotations(config.annotations_path)
    sample = stratified_sample(all_annotations, config.sample_size, config.seed, config.allocation)
    guard = BudgetGuard(config.budget)
    started = time.perf_counter()
    outcomes = await evaluate_pairs(client, config.model, sample.pairs, concurrency=config.concurrency,
                                    guard=guard, max_output_tokens=config.max_output_tokens,
                                    progress=progress)
    wall = time.perf_counter() - started
    run_id = new_run_id(config.out_dir, config.model_kind, config.model)
    snapshot = config_snapshot(run_id, config, sample, all_annotations, argv)
    report = RunReport(run_id=run_id, run_dir=config.out_dir / run_id, sample=sample, outcomes=outcomes,
                       metrics=build_metrics(outcomes, all_annotations),
                       cost_summary=build_cost_summary(config, outcomes, guard, wall), config=snapshot)
    write_run(report)
    return report
