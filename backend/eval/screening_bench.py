"""`python -m backend eval screening --queries Q.jsonl --pool P.tsv --out DIR [--qrels R.tsv] [--model demo|<model>]
[--retrieve K]`: rank each patient's trials with the screening engine, from the note alone.

Each patient (a `{"_id", "text"}` line of Q.jsonl) is screened against the NCT ids the pool lists for them
(`query-id`, `corpus-id` columns; any other column is ignored), through `backend.screening.screen` exactly
as the product runs it. Written to DIR: `run.trec` (`qid Q0 nct rank score tag`), `traces/<qid>.json`
(profile, verdicts, criterion results with evidence), `config.json`, `cost_summary.json`, and with
`--qrels` `metrics.json`: TrialGPT's protocol (ncbi-nlp/TrialGPT `get_ranking_results.py`): NDCG@10 with
linear gains, P@10 = sum of the top ten labels / 20, AUROC of the score between excluded (label 1) and
eligible (2) trials pooled over patients, each with a 95% bootstrap interval over patients. The qrels are
read only after every patient is ranked: the ranker never sees a label.

`--retrieve K` searches the whole corpus from the profile instead of ranking the pool (K ≤ 100) and reports
recall@K of the judged eligible trials that the corpus holds (a lower bound: unjudged finds count as misses).
"""

from __future__ import annotations

import asyncio
import csv
import json
import math
import random
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic

from backend.screening import screen
from backend.screening.models import (
    MAX_CANDIDATES,
    DoneEvent,
    ErrorEvent,
    MemoryJudgementCache,
    PatientInput,
    ProfileEvent,
    ScreenedTrial,
    ScreenRequest,
    TrialEvent,
    Usage,
    note_version,
)
from backend.screening.usage import add_usage
from backend.sources import TrialsSource


def load_queries(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            out[str(row["_id"])] = str(row["text"])
    return out


def load_pool(path: Path) -> dict[str, list[str]]:
    pool: dict[str, list[str]] = defaultdict(list)
    with path.open(encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            nct = row["corpus-id"].strip().upper()
            if nct not in pool[row["query-id"]]:
                pool[row["query-id"]].append(nct)
    return dict(pool)


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    with path.open(encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            qrels[row["query-id"]][row["corpus-id"].strip().upper()] = int(row["score"])
    return dict(qrels)


# ---- metrics ----------------------------------------------------------------------------------------

def ndcg_at(ranking: Sequence[str], labels: dict[str, int], k: int = 10) -> float:
    dcg = sum(labels.get(nct, 0) / math.log2(i + 2) for i, nct in enumerate(ranking[:k]))
    ideal = sorted(labels.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def precision_at_10(ranking: Sequence[str], labels: dict[str, int]) -> float:
    return sum(labels.get(nct, 0) for nct in ranking[:10]) / 20


def auroc(positives: Sequence[float], negatives: Sequence[float]) -> float | None:
    """P(score of a positive > score of a negative), ties half: the Mann-Whitney form of the ROC area."""
    if not positives or not negatives:
        return None
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def _interval(values: list[float], seed: int = 0, rounds: int = 1000) -> list[float] | None:
    if len(values) < 2:
        return None
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(values, k=len(values))) / len(values) for _ in range(rounds))
    return [round(means[int(0.025 * rounds)], 4), round(means[int(0.975 * rounds) - 1], 4)]


def ranking_metrics(rankings: dict[str, list[str]], scores: dict[str, dict[str, float]],
                    qrels: dict[str, dict[str, int]]) -> dict[str, Any]:
    judged = [q for q in rankings if q in qrels]
    ndcg = [ndcg_at(rankings[q], qrels[q]) for q in judged]
    p10 = [precision_at_10(rankings[q], qrels[q]) for q in judged]

    def pooled_auroc(queries: Sequence[str]) -> float | None:
        pos = [scores[q][n] for q in queries for n, label in qrels[q].items() if label == 2 and n in scores[q]]
        neg = [scores[q][n] for q in queries for n, label in qrels[q].items() if label == 1 and n in scores[q]]
        return auroc(pos, neg)

    rng = random.Random(1)
    boot = [pooled_auroc(rng.choices(judged, k=len(judged))) for _ in range(300)] if len(judged) > 1 else []
    boot_values = sorted(b for b in boot if b is not None)
    auc = pooled_auroc(judged)
    return {
        "patients": len(judged),
        "ndcg@10": round(sum(ndcg) / len(ndcg), 4) if ndcg else None, "ndcg@10_ci95": _interval(ndcg),
        "p@10": round(sum(p10) / len(p10), 4) if p10 else None, "p@10_ci95": _interval(p10),
        "auroc_excluded_vs_eligible": round(auc, 4) if auc is not None else None,
        "auroc_ci95": [round(boot_values[int(0.025 * len(boot_values))], 4),
                       round(boot_values[int(0.975 * len(boot_values)) - 1], 4)] if len(boot_values) > 10 else None,
        "per_patient": {q: {"ndcg@10": round(n, 4), "p@10": round(p, 4)} for q, n, p in zip(judged, ndcg, p10,
                                                                                          strict=True)},
        "protocol": "TrialGPT get_ranking_results.py: NDCG@10 linear gains, P@10 = sum(top-10 labels)/20, "
                    "AUROC of the ranking score, eligible (2) vs excluded (1), pooled over patients",
    }


# ---- the run ----------------------------------------------------------------------------------------

@dataclass
class PatientRun:
    qid: str
    trials: list[ScreenedTrial]
    ranking: list[str]
    trace: dict[str, Any]
    usage: Usage | None
    errors: list[str]


async def _screen_patient(qid: str, note: str, requests: list[ScreenRequest], trials: TrialsSource,
                          client: anthropic.AsyncAnthropic, model: str, concurrency: int) -> PatientRun:
    cache = MemoryJudgementCache()
    patient = PatientInput(note=note, version=note_version(note))
    screened: list[ScreenedTrial] = []
    trace: dict[str, Any] = {"qid": qid, "tool_calls": [], "missing": []}
    errors: list[str] = []
    usage: Usage | None = None
    for request in requests:
        async for event in screen(patient, request, trials, client, model, cache, concurrency=concurrency):
            if isinstance(event, ProfileEvent):
                patient = patient.model_copy(update={"profile": event.profile})  # INGEST once per patient
                trace["profile"] = event.profile.model_dump(mode="json")
                trace["sentences"] = [s.text for s in event.sentences]
            elif event.type == "candidates":
                trace["tool_calls"] += [r.model_dump(mode="json") for r in event.tool_calls]
                trace["missing"] += event.missing
            elif isinstance(event, TrialEvent):
                screened.append(event.trial)
            elif isinstance(event, ErrorEvent):
                errors.append(f"{event.code}: {event.message}")
            elif isinstance(event, DoneEvent):
                usage = event.usage if usage is None else add_usage(usage, event.usage)
    ranked = sorted(screened, key=lambda t: (-t.score, t.nct_id))
    trace["trials"] = [t.model_dump(mode="json") for t in ranked]
    trace["errors"] = errors
    return PatientRun(qid, ranked, [t.nct_id for t in ranked], trace, usage, errors)


def _requests(ncts: list[str] | None, retrieve: int | None) -> list[ScreenRequest]:
    if retrieve is not None:  # any status: a cohort's judged trials are mostly closed by now
        return [ScreenRequest(n=retrieve, status=[])]
    ids = ncts or []
    return [ScreenRequest(nct_ids=ids[i:i + MAX_CANDIDATES]) for i in range(0, len(ids), MAX_CANDIDATES)]


async def run_benchmark(*, queries: dict[str, str], pool: dict[str, list[str]] | None, trials: TrialsSource,
                        client: anthropic.AsyncAnthropic, model: str, out: Path, config: dict[str, Any],
                        retrieve: int | None = None, qrels_path: Path | None = None,
                        concurrency: int = 8, patients_at_once: int = 2) -> dict[str, Any]:
    started = time.perf_counter()
    qids = [q for q in queries if retrieve is not None or (pool and q in pool)]
    limit = asyncio.Semaphore(patients_at_once)

    async def one(qid: str) -> PatientRun:
        async with limit:
            return await _screen_patient(qid, queries[qid], _requests((pool or {}).get(qid), retrieve), trials,
                                         client, model, concurrency)

    runs = await asyncio.gather(*(one(q) for q in qids))
    elapsed = time.perf_counter() - started
    (out / "traces").mkdir(parents=True, exist_ok=True)
    tag = f"colleague-{config.get('model_kind', 'model')}"
    with (out / "run.trec").open("w", encoding="utf-8") as f:
        for run in runs:
            for rank, trial in enumerate(run.trials, start=1):
                f.write(f"{run.qid} Q0 {trial.nct_id} {rank} {trial.score:.6f} {tag}\n")
    for run in runs:
        (out / "traces" / f"{run.qid}.json").write_text(json.dumps(run.trace, indent=1), encoding="utf-8")
    total: Usage | None = None
    for u in (r.usage for r in runs if r.usage is not None):
        total = u if total is None else add_usage(total, u)
    screened = sum(len(r.trials) for r in runs)
    criteria = sum(len(t.criteria) for r in runs for t in r.trials)
    cost = {"model": model, "patients": len(runs), "trials_screened": screened, "criteria_judged": criteria,
            "model_calls": total.model_calls if total else 0, "total_input_tokens": total.input_tokens if total else 0,
            "total_output_tokens": total.output_tokens if total else 0,
            "total_cost_usd": total.estimated_cost_usd if total else None, "elapsed_s": round(elapsed, 2),
            "errors": sum(len(r.errors) for r in runs)}
    (out / "config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
    (out / "cost_summary.json").write_text(json.dumps(cost, indent=1), encoding="utf-8")
    summary: dict[str, Any] = {"cost": cost}
    if qrels_path is not None:  # read only now, after every patient is ranked
        qrels = load_qrels(qrels_path)
        if retrieve is None:  # the pool is what is ranked: its judged trials are the ideal ranking's
            qrels = {q: {n: label for n, label in labels.items() if n in set((pool or {}).get(q, []))}
                     for q, labels in qrels.items()}
            metrics = ranking_metrics({r.qid: r.ranking for r in runs},
                                      {r.qid: {t.nct_id: t.score for t in r.trials} for r in runs}, qrels)
        else:
            metrics = recall_metrics({r.qid: r.ranking for r in runs}, qrels, trials_known=pool)
        (out / "metrics.json").write_text(json.dumps(metrics, indent=1), encoding="utf-8")
        summary["metrics"] = metrics
    return summary


def recall_metrics(rankings: dict[str, list[str]], qrels: dict[str, dict[str, int]],
                   trials_known: dict[str, list[str]] | None) -> dict[str, Any]:
    """Recall of the judged eligible trials (label 2) the corpus holds (`trials_known`: the pool, when given)."""
    recalls: list[float] = []
    per: dict[str, float] = {}
    for qid, ranking in rankings.items():
        eligible = {n for n, label in qrels.get(qid, {}).items() if label == 2}
        if trials_known is not None:
            eligible &= set(trials_known.get(qid, []))
        if not eligible:
            continue
        per[qid] = len(eligible & set(ranking)) / len(eligible)
        recalls.append(per[qid])
    return {"patients": len(recalls), "recall": round(sum(recalls) / len(recalls), 4) if recalls else None,
            "recall_ci95": _interval(recalls), "per_patient": per,
            "note": "a lower bound: trials found that were never judged count as misses"}
