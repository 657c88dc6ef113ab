"""Run artifacts (spec "Run Artifacts Structure") and the console summary of a criterion eval run.

runs/<run_id>/config.json        the frozen configuration, dataset checksum, prompt checksum, sample strata
              results.json       one object per sampled pair (the spec's fields plus status and reason)
              metrics.json       model vs experts, GPT-4 vs experts on the same pairs and on the full file
              cost_summary.json  tokens, cost, latency, budget and what was skipped
              audit_table.md     the verdicts side by side for a human reviewer
"""

from __future__ import annotations

import hashlib
import json
import platform
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from backend.criteria.prompts import CRITERION_SYSTEM_PROMPT, CRITERION_TAG
from backend.eval.dataset import CriterionAnnotation, Sample, file_sha256, sentence_indices
from backend.eval.run import EvalConfig, PairOutcome, RunReport


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def config_snapshot(run_id: str, config: EvalConfig, sample: Sample, annotations: list[CriterionAnnotation],
                    argv: list[str] | None) -> dict[str, Any]:
    path = Path(config.annotations_path)
    return {
        "run_id": run_id,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": argv,
        "model": {"kind": config.model_kind, "name": config.model, "backend": config.model_backend,
                  "max_output_tokens": config.max_output_tokens},
        "prompt": {"tag": CRITERION_TAG,
                   "system_prompt_sha256": hashlib.sha256(CRITERION_SYSTEM_PROMPT.encode()).hexdigest()},
        "dataset": {"path": str(path), "sha256": file_sha256(path), "rows": len(annotations),
                    "source": "ncbi/TrialGPT-Criterion-Annotations (public domain), values unchanged"},
        "label_mapping": "spec table: included/not excluded→MET, excluded/not included→NOT_MET, "
                         "not enough information/not applicable→UNKNOWN",
        "sample": {"requested": "all" if sample.requested is None else sample.requested,
                   "drawn": len(sample.pairs), "seed": sample.seed, "allocation": sample.allocation,
                   "stratified_by": "expert verdict", "strata": sample.strata,
                   "not_evaluable_annotation_ids": sample.not_evaluable_ids,
                   "annotation_ids": [a.annotation_id for a in sample.pairs]},
        "concurrency": config.concurrency,
        "budget": {"max_calls": config.budget.max_calls, "max_tokens": config.budget.max_tokens},
        "versions": {"python": platform.python_version(), "anthropic": _version("anthropic"),
                     "colleague": _version("colleague")},
    }


def result_row(o: PairOutcome) -> dict[str, Any]:
    a, v, u = o.annotation, o.verdict, o.usage
    return {
        "pair_index": o.pair_index,
        "annotation_id": a.annotation_id,
        "patient_id": a.patient_id,
        "trial_id": a.trial_id,
        "criterion_type": a.criterion_type,
        "criterion_text": a.criterion_text,
        "expert_label": str(a.expert_label),
        "expert_label_raw": a.expert_label_raw,
        "gpt4_label": str(a.gpt4_label),
        "gpt4_label_raw": a.gpt4_label_raw,
        "status": o.status,
        "reason": o.reason,
        "model_verdict": str(v.label) if v else None,
        "correct": o.correct,
        "reasoning": v.reasoning if v else None,
        "evidence": v.evidence if v else [],
        "evidence_sentences": sentence_indices(a.note, v.evidence) if v else [],
        "expert_sentences": a.expert_sentences,
        "parse_error": v.parse_error if v else None,
        "input_tokens": u.input_tokens if u else None,
        "output_tokens": u.output_tokens if u else None,
        "latency_ms": u.latency_ms if u else None,
        "estimated_cost": u.estimated_cost_usd if u else None,
        "token_count_estimated": u.token_count_estimated if u else None,
        "stop_reason": u.stop_reason if u else None,
    }


def _cell(text: str | None, width: int) -> str:
    flat = " ".join((text or "").split()).replace("|", "\\|")
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def audit_table(outcomes: list[PairOutcome]) -> str:
    lines = ["| # | Patient | Trial | Type | Criterion | Expert | GPT-4 | Model | ✓/✗ | Reasoning |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for o in outcomes:
        a = o.annotation
        model = str(o.verdict.label) if o.verdict else o.status.upper()
        mark = {True: "✓", False: "✗", None: "–"}[o.correct]
        reasoning = o.verdict.reasoning if o.verdict else o.reason
        lines.append(f"| {o.pair_index} | {a.patient_id} | {a.trial_id} | {a.criterion_type} | "
                     f"{_cell(a.criterion_text, 60)} | {a.expert_label} | {a.gpt4_label} | {model} | "
                     f"{mark} | {_cell(reasoning, 80)} |")
    return "\n".join(lines) + "\n"


def _dump(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def write_run(report: RunReport) -> Path:
    report.run_dir.mkdir(parents=True, exist_ok=False)
    _dump(report.run_dir / "config.json", report.config)
    _dump(report.run_dir / "results.json", [result_row(o) for o in report.outcomes])
    _dump(report.run_dir / "metrics.json", report.metrics)
    _dump(report.run_dir / "cost_summary.json", report.cost_summary)
    header = (f"# Audit table: {report.run_id}\n\nModel `{report.config['model']['name']}`, "
              f"{len(report.outcomes)} pairs (seed {report.sample.seed}, {report.sample.allocation} "
              f"sample). ✓/✗ compares the model with the experts; – means not evaluated.\n\n")
    (report.run_dir / "audit_table.md").write_text(header + audit_table(report.outcomes), encoding="utf-8")
    return report.run_dir


# ---- console ----------------------------------------------------------------------------------------

def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


_ROWS = (("accuracy", "accuracy", _pct), ("macro F1", "macro_f1", _num),
         ("F1 MET/NOT_MET", "f1_met_not_met", _num), ("Cohen's kappa", "cohens_kappa", _num),
         ("raw 6-label agreement", "raw_label_agreement", _pct))


def format_table(columns: list[tuple[str, dict[str, Any]]]) -> str:
    """Metrics side by side, one column per (title, metrics dict)."""
    width = max(24, *(len(title) + 2 for title, _ in columns))
    lines = ["".ljust(24) + "".join(title.rjust(width) for title, _ in columns)]
    for label, key, fmt in _ROWS:
        lines.append(label.ljust(24) + "".join(
            (fmt(m.get(key)) if key in m else "–").rjust(width) for _, m in columns))
    lines.append("trial-level accuracy".ljust(24) + "".join(
        (f"{_pct(m['trial_level']['accuracy'])} ({m['trial_level']['n_trials']})" if "trial_level" in m
         else "–").rjust(width) for _, m in columns))
    return "\n".join(lines)


def format_confusion(title: str, metrics: dict[str, Any]) -> str:
    cm = metrics["confusion_matrix"]
    head = "expert \\ predicted".ljust(20) + "".join(label.rjust(10) for label in cm["labels"])
    rows = [label.ljust(20) + "".join(str(n).rjust(10) for n in row)
            for label, row in zip(cm["labels"], cm["matrix"], strict=True)]
    return "\n".join([title, head, *rows])


def format_baseline(baseline: dict[str, Any]) -> str:
    return "\n".join([f"GPT-4 baseline over the full annotation file ({baseline['n']} rows, no model calls)",
                      format_table([("GPT-4 vs experts", baseline)]), "",
                      format_confusion("GPT-4 confusion matrix (full file)", baseline)])


def format_summary(report: RunReport) -> str:
    m, c = report.metrics, report.metrics["counts"]
    cost = report.cost_summary
    n_full = m["gpt4_full_file"]["n"]
    lines = [
        f"run {report.run_id}  ->  {report.run_dir}",
        f"pairs: {c['planned']} sampled, {c['evaluated']} evaluated, {c['errors']} errors, "
        f"{c['skipped']} skipped" + (f"  [{cost['stopped_reason']}]" if cost["stopped_reason"] else ""),
        f"tokens: {cost['total_input_tokens']} in / {cost['total_output_tokens']} out"
        + (" (estimated)" if cost["token_counts_estimated"] else "")
        + ", cost: " + ("unknown" if cost["total_cost_usd"] is None else f"${cost['total_cost_usd']:.4f}")
        + f", unparseable replies: {m['model']['unparseable_replies']}",
        "",
        format_table([(f"model (n={m['model']['n']})", m["model"]),
                      (f"GPT-4 same pairs (n={m['gpt4_same_pairs']['n']})", m["gpt4_same_pairs"]),
                      (f"GPT-4 full file (n={n_full})", m["gpt4_full_file"])]),
        "",
        format_confusion(f"model confusion matrix (n={m['model']['n']})", m["model"]),
    ]
    return "\n".join(lines)
