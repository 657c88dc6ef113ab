"""`python -m backend eval screening` on a small dev slice: three TREC 2021 patients, six pool trials each,
offline with the demo model."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from backend.eval.cli import main
from backend.eval.screening_bench import auroc, ndcg_at, precision_at_10

DATA = Path(__file__).resolve().parents[1] / "fixtures" / "screening"
QUERIES, POOL, QRELS = DATA / "queries.jsonl", DATA / "pool.tsv", DATA / "qrels.tsv"


def _run_lines(path: Path) -> dict[str, list[tuple[str, int, float]]]:
    runs: dict[str, list[tuple[str, int, float]]] = {}
    for line in path.read_text().splitlines():
        qid, q0, nct, rank, score, tag = line.split()
        assert q0 == "Q0" and tag == "colleague-demo"
        runs.setdefault(qid, []).append((nct, int(rank), float(score)))
    return runs


def _labels() -> dict[str, dict[str, int]]:
    labels: dict[str, dict[str, int]] = {}
    with QRELS.open() as f:
        for row in csv.DictReader(f, delimiter="\t"):
            labels.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
    return labels


def test_ranks_the_pool_and_scores_it_by_trialgpts_protocol(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert main(["screening", "--queries", str(QUERIES), "--pool", str(POOL), "--qrels", str(QRELS),
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "3 patients, 18 trials" in printed and "NDCG@10" in printed
    runs = _run_lines(out / "run.trec")
    labels = _labels()
    assert set(runs) == set(labels)
    for qid, lines in runs.items():
        assert sorted(n for n, _, _ in lines) == sorted(labels[qid])  # every pool trial, once
        assert [r for _, r, _ in lines] == list(range(1, 7))
        assert [s for _, _, s in lines] == sorted((s for _, _, s in lines), reverse=True)
        trace = json.loads((out / "traces" / f"{qid}.json").read_text())
        assert trace["profile"]["age"] is not None and trace["sentences"]
        assert [t["nct_id"] for t in trace["trials"]] == [n for n, _, _ in lines]
        judged = [c for t in trace["trials"] for c in t["criteria"]]
        assert judged and all(c["label"] in ("MET", "NOT_MET", "UNKNOWN") for c in judged)
        assert all(0 <= i < len(trace["sentences"]) for c in judged for i in c["evidence"])

    metrics = json.loads((out / "metrics.json").read_text())
    ndcgs = [ndcg_at([n for n, _, _ in runs[q]], labels[q]) for q in sorted(runs)]
    assert metrics["patients"] == 3 and math.isclose(metrics["ndcg@10"], round(sum(ndcgs) / 3, 4))
    p10 = [sum(labels[q][n] for n, _, _ in runs[q][:10]) / 20 for q in sorted(runs)]
    assert math.isclose(metrics["p@10"], round(sum(p10) / 3, 4))
    scores = {(q, n): s for q in runs for n, _, s in runs[q]}
    pos = [scores[(q, n)] for q in labels for n, lab in labels[q].items() if lab == 2]
    neg = [scores[(q, n)] for q in labels for n, lab in labels[q].items() if lab == 1]
    assert math.isclose(metrics["auroc_excluded_vs_eligible"], round(auroc(pos, neg), 4))
    cost = json.loads((out / "cost_summary.json").read_text())
    assert cost["patients"] == 3 and cost["trials_screened"] == 18 and cost["errors"] == 0
    assert cost["model_calls"] >= 3 and cost["total_cost_usd"] is None  # the demo model has no price
    config = json.loads((out / "config.json").read_text())
    assert config["model_kind"] == "demo" and config["pool"] == str(POOL)

    # The ranker never reads a label: other labels, the same run.
    flipped = tmp_path / "flipped.tsv"
    header, *rows = QRELS.read_text().splitlines()
    flipped.write_text("\n".join([header, *(f"{q}\t{n}\t{2 - int(s)}" for q, n, s in (r.split("\t") for r in rows))])
                       + "\n")
    again = tmp_path / "again"
    assert main(["screening", "--queries", str(QUERIES), "--pool", str(POOL), "--qrels", str(flipped),
                 "--out", str(again)]) == 0
    assert (again / "run.trec").read_text() == (out / "run.trec").read_text()
    assert json.loads((again / "metrics.json").read_text())["ndcg@10"] != metrics["ndcg@10"]


def test_retrieve_mode_reports_recall(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "retrieve"
    assert main(["screening", "--queries", str(QUERIES), "--pool", str(POOL), "--qrels", str(QRELS),
                 "--retrieve", "5", "--limit", "1", "--out", str(out)]) == 0
    runs = _run_lines(out / "run.trec")
    assert list(runs) == ["trec-20211"] and 1 <= len(runs["trec-20211"]) <= 5
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["patients"] == 1 and 0 <= metrics["recall"] <= 1
    trace = json.loads((out / "traces" / "trec-20211.json").read_text())
    assert trace["tool_calls"] and all(c["tool_name"] == "search_trials" for c in trace["tool_calls"])
    assert "recall@5" in capsys.readouterr().out


def test_usage_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["screening", "--queries", str(QUERIES), "--out", str(tmp_path)]) == 2
    assert "--pool" in capsys.readouterr().err


def test_metric_definitions() -> None:
    assert ndcg_at(["a", "b"], {"a": 2, "b": 1, "c": 0}) == 1.0
    assert math.isclose(ndcg_at(["b", "a"], {"a": 2, "b": 1}), (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)))
    assert precision_at_10(["a", "b", "x"], {"a": 2, "b": 1}) == 3 / 20
    assert auroc([2.0, 3.0], [1.0, 3.0]) == (1 + 0 + 1 + 0.5) / 4  # wins, a loss, a tie
