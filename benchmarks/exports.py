"""Exports: how long a results table and a shortlist report take to build. Not a test.

    .venv/bin/python -m benchmarks.exports [--rows 500] [--repeat 5]     (from the project root)

Real trials from the offline corpus (the first `--rows` of a broad search) with three AI columns whose
verdicts, reasoning and evidence are synthetic but sized like the demo model's; prints p50/max of the CSV,
the XLSX, the report's HTML and its PDF, and the PDF's size and page count.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import statistics
import time
from collections.abc import Callable

from pypdf import PdfReader

from backend.exports import report, tables
from backend.exports.schemas import ChartPoint, ReportChart
from backend.sources.models import TrialSearchParams
from backend.sources.offline import OfflineClinicalTrialsService, open_index

COLUMNS = ["NCT ID", "Title", "Phase", "Status", "Conditions", "Enrollment", "Sponsor"]
AI = ["Adults?", "Allows brain metastases?", "Sample size"]


async def _trials(n: int) -> list[list[str]]:
    service = OfflineClinicalTrialsService(open_index())
    rows: list[list[str]] = []
    token = None
    while len(rows) < n:
        page = await service.search_trials(TrialSearchParams(condition="cancer", status=[], page_size=100,
                                                             page_token=token))
        rows += [[t.nct_id, t.title, ", ".join(t.phase), t.status or "", "; ".join(t.conditions[:3]),
                  str(t.enrollment or ""), t.sponsor or ""] for t in page.trials]
        token = page.next_page_token
        if not token:
            break
    return rows[:n]


def _table(base: list[list[str]]) -> tables.Table:
    header = COLUMNS + [h for name in AI for h in (name, f"{name}: reasoning", f"{name}: evidence")]
    reasoning = "The eligibility criteria give the minimum age as 18 years, within the required range. " * 2
    rows = [row + [x for _ in AI for x in ("Yes", reasoning, "Inclusion: age ≥ 18 | ECOG 0–1")] for row in base]
    ids = [r[0] for r in base]
    return tables.Table(header, rows, ids, [tables.record_link("trialscout", i) for i in ids], 0)


def _time(label: str, run: Callable[[], object], repeat: int) -> object:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        times.append((time.perf_counter() - start) * 1000)
    print(f"{label:<22} p50 {statistics.median(times):8.1f} ms   max {max(times):8.1f} ms")
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    table = _table(asyncio.run(_trials(args.rows)))
    points = [ChartPoint(label=f"Phase {i}", value=10 * i) for i in range(1, 5)]
    chart = ReportChart(title="Trials by phase", points=points)
    summary = "## Summary\n\n" + "Most trials are adult-only. " * 40
    view = report.view("Benchmark shortlist", "trialscout", "cancer", summary, table, AI, [chart, chart])
    print(f"{len(table.rows)} rows × {len(table.header)} columns")
    _time("CSV", lambda: tables.to_csv(table), args.repeat)
    _time("XLSX", lambda: tables.to_xlsx(table, "Results"), args.repeat)
    _time("report HTML", lambda: report.to_html(view), args.repeat)
    pdf = _time("report PDF", lambda: report.to_pdf(view), args.repeat)
    assert isinstance(pdf, bytes)
    print(f"PDF: {len(pdf) / 1024:.0f} KiB, {len(PdfReader(io.BytesIO(pdf)).pages)} pages")


if __name__ == "__main__":
    main()
