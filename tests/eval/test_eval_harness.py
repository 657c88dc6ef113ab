"""End-to-end runs of the harness through the real SDK over a MockTransport fake of the Messages API."""

import asyncio
import json

import pytest

from backend.criteria.labels import Verdict
from backend.eval.harness import BudgetGuard, run_criteria_eval
from backend.eval.metrics import accuracy
from backend.eval.run import Budget, EvalConfig
from tests.fakes.mock_messages import api_error, demo, reply

SPEC_ARTIFACTS = ["config.json", "results.json", "metrics.json", "cost_summary.json", "audit_table.md"]
SPEC_RESULT_FIELDS = {"pair_index", "patient_id", "trial_id", "criterion_type", "criterion_text", "expert_label",
                      "gpt4_label", "model_verdict", "correct", "reasoning", "evidence_sentences", "input_tokens",
                      "output_tokens", "latency_ms", "estimated_cost", "token_count_estimated"}
SPEC_COST_FIELDS = {"model", "total_pairs", "total_cost_usd", "total_input_tokens", "total_output_tokens",
                    "avg_latency_ms", "token_counts_estimated"}


def config(tmp_path, n=12, **kwargs):
    return EvalConfig(model_kind="demo", model="colleague-demo", sample_size=n, seed=7, out_dir=tmp_path,
                      **kwargs)


def load(run_dir, name):
    return json.loads((run_dir / name).read_text())


async def test_a_demo_run_writes_the_five_artifacts(tmp_path, make_client, annotations):
    report = await run_criteria_eval(make_client(), config(tmp_path), progress=False, argv=["eval", "criteria"])
    run_dir = tmp_path / report.run_id
    assert report.run_id.startswith("phase0-demo-")
    assert sorted(p.name for p in run_dir.iterdir()) == sorted(SPEC_ARTIFACTS)

    results = load(run_dir, "results.json")
    assert len(results) == 12 and SPEC_RESULT_FIELDS <= set(results[0])
    assert [r["pair_index"] for r in results] == list(range(12))
    assert all(r["status"] == "evaluated" and r["model_verdict"] in {"MET", "NOT_MET", "UNKNOWN"} for r in results)
    assert all(r["correct"] == (r["model_verdict"] == r["expert_label"]) for r in results)
    by_id = {a.annotation_id: a for a in annotations}
    for r in results:
        a = by_id[r["annotation_id"]]
        assert (r["patient_id"], r["trial_id"], r["expert_label"], r["gpt4_label"]) == (
            a.patient_id, a.trial_id, str(a.expert_label), str(a.gpt4_label))

    cfg = load(run_dir, "config.json")
    assert cfg["run_id"] == report.run_id and cfg["command"] == ["eval", "criteria"]
    assert cfg["sample"]["seed"] == 7 and cfg["sample"]["drawn"] == 12
    assert cfg["sample"]["annotation_ids"] == [r["annotation_id"] for r in results]
    assert {k: v["sampled"] for k, v in cfg["sample"]["strata"].items()} == {"MET": 4, "NOT_MET": 4, "UNKNOWN": 4}
    assert cfg["prompt"]["tag"] == "[colleague:criterion-eval v1]"
    assert cfg["dataset"]["rows"] == 1015

    metrics = load(run_dir, "metrics.json")
    assert metrics["counts"] == {"planned": 12, "evaluated": 12, "errors": 0, "skipped": 0}
    model = metrics["model"]
    assert model["n"] == 12
    assert model["accuracy"] == pytest.approx(accuracy([r["expert_label"] for r in results],
                                                       [r["model_verdict"] for r in results]))
    matrix = model["confusion_matrix"]["matrix"]
    assert sum(map(sum, matrix)) == 12 and [sum(row) for row in matrix] == [4, 4, 4]
    same = metrics["gpt4_same_pairs"]
    assert same["accuracy"] == pytest.approx(sum(r["gpt4_label"] == r["expert_label"] for r in results) / 12)
    assert metrics["gpt4_full_file"]["n"] == 1015
    assert metrics["gpt4_full_file"]["raw_label_agreement"] == pytest.approx(0.873, abs=0.001)

    cost = load(run_dir, "cost_summary.json")
    assert SPEC_COST_FIELDS <= set(cost)
    assert cost["total_pairs"] == 12 and cost["calls_started"] == 12 and cost["pairs_skipped"] == 0
    assert cost["total_input_tokens"] == sum(r["input_tokens"] for r in results) > 0
    assert cost["total_output_tokens"] == sum(r["output_tokens"] for r in results) > 0
    assert cost["total_cost_usd"] == 0.0 and cost["token_counts_estimated"] is True

    audit = (run_dir / "audit_table.md").read_text().splitlines()
    assert "| # | Patient | Trial | Type | Criterion | Expert | GPT-4 | Model | ✓/✗ | Reasoning |" in audit
    rows = [line for line in audit if line.startswith("| ") and line[2].isdigit()]
    assert len(rows) == 12
    assert rows[0].startswith(f"| 0 | {results[0]['patient_id']} | {results[0]['trial_id']} |")
    assert sum("✓" in row for row in rows) == sum(r["correct"] for r in results)


async def test_the_budget_guard_stops_on_max_calls_and_records_the_skipped(tmp_path, make_client):
    calls = []

    async def counting(request):
        calls.append(request)
        return await demo(request)

    cfg = config(tmp_path, concurrency=3, budget=Budget(max_calls=5))
    report = await run_criteria_eval(make_client(counting), cfg, progress=False)
    assert len(calls) == 5
    statuses = [o.status for o in report.outcomes]
    assert statuses.count("evaluated") == 5 and statuses.count("skipped") == 7
    cost = load(report.run_dir, "cost_summary.json")
    assert cost["stopped_reason"] == "budget: max_calls=5 reached"
    assert cost["pairs_skipped"] == 7 and len(cost["skipped_annotation_ids"]) == 7
    results = load(report.run_dir, "results.json")
    skipped = [r for r in results if r["status"] == "skipped"]
    assert all(r["model_verdict"] is None and r["correct"] is None and "max_calls" in r["reason"] for r in skipped)
    assert load(report.run_dir, "metrics.json")["model"]["n"] == 5
    assert "SKIPPED" in (report.run_dir / "audit_table.md").read_text()


async def test_the_budget_guard_stops_on_max_tokens(tmp_path, make_client):
    # each call uses 100 + 10 tokens; one at a time: 0 -> 110 -> 220 -> 330 (>= 250: stop)
    client = make_client(lambda request: reply('{"answer": "unknown", "reasoning": "", "evidence": []}',
                                               input_tokens=100, output_tokens=10))
    cfg = config(tmp_path, n=6, concurrency=1, budget=Budget(max_tokens=250))
    report = await run_criteria_eval(client, cfg, progress=False)
    assert [o.status for o in report.outcomes].count("evaluated") == 3
    assert report.cost_summary["stopped_reason"].startswith("budget: max_tokens=250 reached (330 used)")


def test_budget_guard_unit():
    guard = BudgetGuard(Budget(max_calls=2))
    assert guard.try_start() is None and guard.try_start() is None
    assert guard.try_start() == "budget: max_calls=2 reached" and guard.calls_started == 2
    unlimited = BudgetGuard(Budget())
    assert all(unlimited.try_start() is None for _ in range(100))


async def test_concurrency_is_bounded(tmp_path, make_client):
    in_flight = peak = 0
    three_in_flight = asyncio.Event()

    async def slow(request):
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        if in_flight >= 3:
            three_in_flight.set()
        # Hold each request until three are in flight (the last few pairs never get there: the timeout lets them
        # finish), then yield so a fourth could start if the bound were broken.
        try:
            await asyncio.wait_for(three_in_flight.wait(), timeout=0.5)
        except TimeoutError:
            pass
        for _ in range(5):
            await asyncio.sleep(0)
        in_flight -= 1
        return await demo(request)

    report = await run_criteria_eval(make_client(slow), config(tmp_path, concurrency=3), progress=False)
    assert peak == 3
    assert all(o.status == "evaluated" for o in report.outcomes)


async def test_unusable_replies_are_scored_as_unknown_and_counted(tmp_path, make_client):
    client = make_client(lambda request: reply("I think the patient qualifies."))
    report = await run_criteria_eval(client, config(tmp_path, n=6), progress=False)
    assert all(o.verdict.label == Verdict.UNKNOWN and o.verdict.parse_error for o in report.outcomes)
    assert report.metrics["model"]["unparseable_replies"] == 6
    results = load(report.run_dir, "results.json")
    assert all(r["parse_error"].startswith("no JSON object") for r in results)


async def test_an_api_error_on_one_pair_does_not_stop_the_run(tmp_path, make_client, annotations):
    calls = 0

    async def flaky(request):
        nonlocal calls
        calls += 1
        if calls == 2:
            return api_error(500, "api_error", "boom")
        return await demo(request)

    report = await run_criteria_eval(make_client(flaky), config(tmp_path, n=6, concurrency=1), progress=False)
    assert [o.status for o in report.outcomes] == ["evaluated", "error", *["evaluated"] * 4]
    assert report.outcomes[1].reason == "api_error: The model service had an internal error. Please retry."
    assert report.metrics["counts"]["errors"] == 1 and report.metrics["model"]["n"] == 5


async def test_an_authentication_error_stops_the_run_cleanly(tmp_path, make_client):
    def unauthorized(request):
        return api_error(401, "authentication_error", "invalid x-api-key")

    report = await run_criteria_eval(make_client(unauthorized), config(tmp_path, n=6, concurrency=1),
                                     progress=False)
    assert [o.status for o in report.outcomes] == ["error", *["skipped"] * 5]
    assert report.cost_summary["stopped_reason"] == ("stopped: authentication_error: The API key was refused; "
                                                     "check ANTHROPIC_API_KEY.")
    assert (report.run_dir / "metrics.json").exists()
    assert report.metrics["model"]["n"] == 0 and report.metrics["model"]["accuracy"] is None


async def test_a_spent_budget_stops_the_run_although_the_api_says_429(tmp_path, make_client):
    """The API reports a reached spend limit as a 429, which alone would read as "wait and retry"."""
    calls = []

    def spent(request):
        calls.append(request)
        return api_error(429, "rate_limit_error", "usage limit", error_code="enforced_spend_limit_reached")

    report = await run_criteria_eval(make_client(spent), config(tmp_path, n=6, concurrency=1), progress=False)
    assert len(calls) == 1
    assert [o.status for o in report.outcomes] == ["error", *["skipped"] * 5]
    assert report.cost_summary["stopped_reason"] == ("stopped: billing_error: The model account's spend limit "
                                                     "is reached; an admin must raise it (retrying will not help).")


async def test_run_ids_do_not_collide(tmp_path, make_client):
    first = await run_criteria_eval(make_client(), config(tmp_path, n=3), progress=False)
    second = await run_criteria_eval(make_client(), config(tmp_path, n=3), progress=False)
    assert first.run_dir != second.run_dir and first.run_dir.exists() and second.run_dir.exists()
