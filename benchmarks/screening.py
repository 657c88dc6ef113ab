"""Benchmark (not a test): one screening offline with the demo model, 20 candidates of ~20 criteria each.

The engine runs as the product runs it (`backend.screening.screen`, NCT-list mode, the SDK answered by the
app's demo transport, the offline corpus), over 20 corpus trials whose eligibility text parses into 15 to 25
criteria, for a TREC 2021 note. Prints the time to the candidates, to the last trial and the criteria per
second, cold (empty judgement cache) and cached; the target is 10 s cold.

    COLLEAGUE_OFFLINE_INDEX_DIR=… .venv/bin/python -m benchmarks.screening [--trials 20] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path

import anthropic
import httpx2

from backend.demo.transport import DEMO_MODEL_ID, DemoTransport
from backend.screening import screen
from backend.screening.criteria_parser import parse_criteria
from backend.screening.models import MemoryJudgementCache, PatientInput, ScreenRequest, note_version
from backend.sources.offline import OfflineClinicalTrialsService, open_index

QUERIES = Path("/work/shared/fixtures/trialgpt/trec_2021_queries.jsonl")
FALLBACK_NOTE = ("A 58-year-old woman with type 2 diabetes and hypertension presents with chest pain radiating "
                 "to the left arm. She denies smoking. ECG shows ST elevation; troponin is elevated.")


def _note() -> str:
    if QUERIES.is_file():
        return json.loads(QUERIES.read_text().splitlines()[1])["text"]
    return FALLBACK_NOTE


def _trials(n: int) -> list[str]:
    index = open_index()
    picked = []
    for nct_id in sorted(index.trials):
        if 15 <= len(parse_criteria(index.trials[nct_id].eligibility_criteria)) <= 25:
            picked.append(nct_id)
            if len(picked) == n:
                break
    return picked


async def _once(client: anthropic.AsyncAnthropic, note: str, ids: list[str], cache: MemoryJudgementCache
                ) -> tuple[float, float, int]:
    started = time.perf_counter()
    to_candidates = 0.0
    criteria = 0
    async for event in screen(PatientInput(note=note, version=note_version(note)), ScreenRequest(nct_ids=ids),
                              OfflineClinicalTrialsService(), client, DEMO_MODEL_ID, cache):
        if event.type == "candidates":
            to_candidates = time.perf_counter() - started
        elif event.type == "trial":
            criteria += len(event.trial.criteria)
    return to_candidates, time.perf_counter() - started, criteria


async def main(trials: int, runs: int) -> None:
    ids = _trials(trials)
    note = _note()
    client = anthropic.AsyncAnthropic(api_key="demo", max_retries=0,
                                      http_client=httpx2.AsyncClient(transport=DemoTransport(delay=0)))
    try:
        for label, fresh in (("cold", True), ("cached", False)):
            shared = MemoryJudgementCache()
            if not fresh:
                await _once(client, note, ids, shared)
            results = [await _once(client, note, ids, MemoryJudgementCache() if fresh else shared)
                       for _ in range(runs)]
            total = statistics.median(r[1] for r in results)
            criteria = results[0][2]
            print(f"{label:6s} {len(ids)} trials, {criteria} criteria: candidates after "
                  f"{statistics.median(r[0] for r in results) * 1000:.0f} ms, all screened in {total:.2f} s "
                  f"({criteria / total:.0f} criteria/s), median of {runs}")
    finally:
        await client.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.trials, args.runs))
