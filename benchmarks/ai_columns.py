"""Benchmark (not a test): one AI column over 50 trials, cold (every row asks the model) and cached.

The app runs under uvicorn against the scripted fake Messages API (real SDK, real sockets) and the
offline corpus. For each simulated model latency it prints rows/s cold and cached, and the time to the
first row, with the default concurrency (COLLEAGUE_AI_COLUMN_CONCURRENCY, 8).

    .venv/bin/python benchmarks/ai_columns.py [--database-url URL] [--rows 50] [--latencies 0,0.5]

--database-url is migrated and written to (a user, cached results): give it a throwaway database.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.db.migrate import upgrade  # noqa: E402
from backend.demo.wire import Reply  # noqa: E402
from backend.sources.models import TrialSearchParams  # noqa: E402
from benchmarks.harness import bench_app, serve  # noqa: E402
from tests.fakes.anthropic_server import (
    Script,  # noqa: E402
    start_fake_anthropic,  # noqa: E402
)

VERDICT = json.dumps({"answer": "yes", "reasoning": "The record says so.", "evidence": ["Docetaxel"]})


async def column(client: httpx.AsyncClient, ids: list[str], criteria: str) -> tuple[float, float, dict]:
    """(wall seconds, seconds to the first row, the complete event's data)."""
    body = {"column": {"name": "bench", "criteria": criteria, "type": "boolean"}, "app": "trialscout", "ids": ids}
    start = time.perf_counter()
    first, event, complete = None, None, None
    async with client.stream("POST", "/api/ai-columns/evaluate", json=body) as r:
        r.raise_for_status()
        async for line in r.aiter_lines():
            if line.startswith("event: "):
                event = line[7:]
                if event == "row" and first is None:
                    first = time.perf_counter() - start
            elif line.startswith("data: ") and event in ("complete", "error"):
                complete = json.loads(line[6:])
    if complete is None or complete["type"] != "complete":
        raise RuntimeError(f"column failed: {complete}")
    return time.perf_counter() - start, first or float("nan"), complete


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url")
    parser.add_argument("--rows", type=int, default=50)
    parser.add_argument("--latencies", default="0,0.5", help="simulated seconds per model reply")
    args = parser.parse_args()
    db_url = args.database_url or f"sqlite:///{tempfile.mkdtemp()}/bench.db"
    upgrade(db_url)
    fake, stop_fake = start_fake_anthropic()
    app = bench_app(db_url, fake.url)
    page = await app.state.sources.trials.search_trials(TrialSearchParams(condition="cancer", page_size=100))
    ids = [t.nct_id for t in page.trials][: args.rows]
    port, server, thread = await serve(app)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=300) as client:
        r = await client.post("/api/auth/login", json={"username": "bench", "password": "bench-pw"})
        r.raise_for_status()
        print(f"database: {db_url.split('://')[0]}   rows: {len(ids)}   concurrency: 8 (default)")
        print(f"{'model latency':>14} {'cold rows/s':>12} {'cold 1st row ms':>16} {'cached rows/s':>14} "
              f"{'cached 1st row ms':>18} {'model calls, both runs':>22}")
        await column(client, ids[:2], "warm-up")
        for n, latency in enumerate(float(x) for x in args.latencies.split(",")):
            fake.default = Script.answer(Reply.text(VERDICT), delay=latency)
            calls = len(fake.requests)
            criteria = f"The trial has a docetaxel arm (run {n})"
            cold, cold_first, done = await column(client, ids, criteria)
            assert done["cached"] == 0 and done["done"] == len(ids), done
            warm, warm_first, done = await column(client, ids, criteria)
            assert done["cached"] == len(ids), done
            print(f"{latency:>13.2f}s {len(ids) / cold:>12.1f} {cold_first * 1000:>16.1f} {len(ids) / warm:>14.1f} "
                  f"{warm_first * 1000:>18.1f} {len(fake.requests) - calls:>22}")
    server.should_exit = True
    thread.join(timeout=10)
    stop_fake()


if __name__ == "__main__":
    asyncio.run(main())
