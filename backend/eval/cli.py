"""`python -m backend eval criteria [--sample N|all] [--seed S] [--model demo|claude] [--out DIR] …`

Prints the GPT-4 baseline over the full annotation file (no model calls) and the evaluator's metrics
over the sample side by side, with a progress bar on stderr while the model runs, and writes the run
artifacts under `--out` (default `runs/`). `--baseline-only` prints the baseline and calls nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import anthropic

from backend.agent.llm import LocalModel, make_llm
from backend.config import Settings
from backend.criteria.evaluator import DEFAULT_MAX_TOKENS
from backend.demo.transport import DEMO_MODEL_ID, DemoTransport
from backend.eval import screening_bench
from backend.eval.artifacts import format_baseline, format_summary
from backend.eval.dataset import ANNOTATIONS_PATH, load_annotations
from backend.eval.harness import gpt4_baseline, run_criteria_eval
from backend.eval.run import Budget, EvalConfig


class UsageError(Exception):
    """A problem with how the command was invoked; printed without a traceback."""


def _sample_size(value: str) -> int | None:
    if value.strip().lower() == "all":
        return None
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'all', got {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError("the sample needs at least one pair")
    return n


def _positive(value: str) -> int:
    n = int(value)
    if n < 1:
        raise argparse.ArgumentTypeError("must be >= 1")
    return n


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m backend eval", description="Evaluation harnesses.")
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("criteria", help="criterion-level eval against the TrialGPT expert annotations",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("--sample", type=_sample_size, default=60, metavar="N|all",
                   help="pairs to evaluate, stratified by expert verdict (default 60)")
    c.add_argument("--seed", type=int, default=42, help="sampling seed (default 42)")
    c.add_argument("--model", choices=("demo", "claude"), default="demo",
                   help="demo: the built-in offline demo model; "
                        "claude: the Anthropic API (needs ANTHROPIC_API_KEY)")
    c.add_argument("--claude-model", default=None,
                   help="model name for --model claude (default: COLLEAGUE_MODEL)")
    c.add_argument("--out", type=Path, default=Path("runs"), help="artifacts directory (default runs/)")
    c.add_argument("--allocation", choices=("balanced", "proportional"), default="balanced",
                   help="equal share per expert verdict (default) or the file's label mix")
    c.add_argument("--concurrency", type=_positive, default=4, help="requests in flight (default 4)")
    c.add_argument("--max-calls", type=_positive, default=None, help="stop starting calls after N")
    c.add_argument("--max-tokens", type=_positive, default=2_000_000,
                   help="stop starting calls once N input+output tokens are used (default 2,000,000)")
    c.add_argument("--max-output-tokens", type=_positive, default=DEFAULT_MAX_TOKENS,
                   help=f"max_tokens of each request (default {DEFAULT_MAX_TOKENS})")
    c.add_argument("--annotations", type=Path, default=ANNOTATIONS_PATH, help=argparse.SUPPRESS)
    c.add_argument("--baseline-only", action="store_true",
                   help="print the GPT-4 baseline over the full file and exit (no model calls)")
    c.add_argument("--no-progress", action="store_true", help="no progress bar")
    s = sub.add_parser("screening", help="rank each patient's trials with the screening engine (TrialGPT protocol)",
                       description=screening_bench.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("--queries", type=Path, required=True, help="patients: JSONL of {_id, text}")
    s.add_argument("--pool", type=Path, help="TSV with query-id and corpus-id columns: the trials to rank per patient")
    s.add_argument("--out", type=Path, required=True, help="directory for run.trec, traces and the summaries")
    s.add_argument("--qrels", type=Path, help="TSV query-id, corpus-id, score: writes metrics.json (read last)")
    s.add_argument("--model", default="demo", help="demo (offline, default) or a Claude model id (needs a key)")
    s.add_argument("--retrieve", type=int, metavar="K", help="search the whole corpus for K trials instead of "
                                                            "ranking the pool (recall@K)")
    s.add_argument("--limit", type=_positive, help="only the first N patients")
    s.add_argument("--concurrency", type=_positive, default=8, help="model calls in flight per patient (default 8)")
    return parser


def build_client(kind: str, settings: Settings,
                 claude_model: str | None) -> tuple[anthropic.AsyncAnthropic, str, str]:
    """(SDK client, model name, backend description) for `--model`: Claude through the API key, or the
    app's own offline demo model (`backend.agent.llm.make_llm` without a key)."""
    demo_model = LocalModel(DEMO_MODEL_ID, DemoTransport(delay=settings.demo_delay_ms / 1000))
    if kind == "claude":
        if not settings.anthropic_api_key:
            raise UsageError("--model claude needs ANTHROPIC_API_KEY in the environment "
                             "(or use --model demo, which runs offline)")
        return make_llm(settings, demo_model).client, claude_model or settings.colleague_model, "anthropic"
    demo = make_llm(settings.model_copy(update={"anthropic_api_key": None}), demo_model)
    return demo.client, demo.model, "app demo model (backend.demo)"


async def _run(args: argparse.Namespace, argv: list[str]) -> int:
    client, model, backend = build_client(args.model, Settings(), args.claude_model)
    config = EvalConfig(model_kind=args.model, model=model, sample_size=args.sample, seed=args.seed,
                        allocation=args.allocation, concurrency=args.concurrency,
                        budget=Budget(max_calls=args.max_calls, max_tokens=args.max_tokens),
                        max_output_tokens=args.max_output_tokens, out_dir=args.out,
                        annotations_path=args.annotations, model_backend=backend)
    try:
        report = await run_criteria_eval(client, config, progress=not args.no_progress,
                                         argv=["eval", *argv])
    finally:
        await client.close()
    print(format_baseline(report.metrics["gpt4_full_file"]))
    print()
    print(format_summary(report))
    return 0


async def _screening(args: argparse.Namespace, argv: list[str]) -> int:
    if args.pool is None and args.retrieve is None:
        raise UsageError("give --pool (rank each patient's pool) or --retrieve K (search the corpus)")
    if args.retrieve is not None and not 1 <= args.retrieve <= 100:
        raise UsageError("--retrieve K takes 1 <= K <= 100")
    kind = "demo" if args.model == "demo" else "claude"
    client, model, backend = build_client(kind, Settings(), None if kind == "demo" else args.model)
    from backend.sources import get_sources
    settings = Settings()
    queries = screening_bench.load_queries(args.queries)
    pool = screening_bench.load_pool(args.pool) if args.pool else None
    if args.limit:
        queries = {q: queries[q] for q in [q for q in queries if pool is None or q in pool][:args.limit]}
    config = {"command": ["eval", *argv], "model_kind": kind, "model": model, "model_backend": backend,
              "queries": str(args.queries), "pool": str(args.pool) if args.pool else None,
              "retrieve": args.retrieve, "sources": settings.colleague_sources, "concurrency": args.concurrency,
              "patients": len(queries)}
    try:
        summary = await screening_bench.run_benchmark(
            queries=queries, pool=pool, trials=get_sources(settings).trials, client=client, model=model,
            out=args.out, config=config, retrieve=args.retrieve, qrels_path=args.qrels,
            concurrency=args.concurrency)
    finally:
        await client.close()
    cost = summary["cost"]
    print(f"{cost['patients']} patients, {cost['trials_screened']} trials, {cost['criteria_judged']} criteria "
          f"in {cost['elapsed_s']} s; {cost['model_calls']} model calls; errors: {cost['errors']}")
    metrics = summary.get("metrics")
    if metrics and "ndcg@10" in metrics:
        print(f"NDCG@10 {metrics['ndcg@10']} {metrics['ndcg@10_ci95']}  P@10 {metrics['p@10']} "
              f"{metrics['p@10_ci95']}  AUROC excluded-vs-eligible {metrics['auroc_excluded_vs_eligible']} "
              f"{metrics['auroc_ci95']}  ({metrics['patients']} patients)")
    elif metrics:
        print(f"recall@{args.retrieve} {metrics['recall']} {metrics['recall_ci95']} ({metrics['patients']} patients)")
    print(f"written to {args.out}")
    return 0


def main(argv: list[str]) -> int:
    """Entry point for `python -m backend eval …` (argv excludes the `eval` word itself)."""
    args = build_parser().parse_args(argv)
    try:
        if args.command == "screening":
            return asyncio.run(_screening(args, argv))
        if args.baseline_only:
            print(format_baseline(gpt4_baseline(load_annotations(args.annotations))))
            return 0
        return asyncio.run(_run(args, argv))
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: no artifacts were written", file=sys.stderr)
        return 130
