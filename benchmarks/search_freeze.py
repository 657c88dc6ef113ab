"""Benchmark (not a test): does a costly search hold everyone else? GET /api/health and a running chat stream,
idle and while one user runs the costliest searches the API accepts, back to back.

`python -m backend serve` (one worker) runs from `--root` (this checkout by default; point it at another
checkout to measure that code) against the fake Messages API in a second process, streaming `--pace` deltas
a second to one open chat stream of another user. Prints p50/p99/max of GET /api/health (one every 20 ms)
and the stream's largest gaps between events, idle and beside the searches, and how long the searches took.

    .venv/bin/python benchmarks/search_freeze.py [--root DIR] [--seconds 10] [--pace 20] [--issue]

`--issue` sends issue 27's search instead (`a* OR b* OR … OR z*` in three fields), which this code refuses
(422) and the code before answered in 7 s on the event loop.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.auth.service import ensure_user  # noqa: E402
from backend.db.migrate import upgrade  # noqa: E402
from backend.db.session import Database  # noqa: E402
from benchmarks.durable_streams import FAKE, pct  # noqa: E402
from tests.live_server import free_port  # noqa: E402

# The costliest the limits let through (backend/sources/offline/query.py): six 3-letter wildcards on the
# commonest stems and 34 more OR-ed words, over the three text fields at once; and its statistics.
WILD = ["pat*", "tre*", "stu*", "dis*", "can*", "the*"]
WORDS = ("patients cancer treatment study disease therapy trial clinical years age criteria inclusion exclusion "
         "women men children adults cell tumor chronic acute placebo dose drug safety efficacy phase care health "
         "risk pain blood heart lung").split()
WORST = {"condition": " OR ".join(WILD[:2] + WORDS[:12]), "intervention": " OR ".join(WILD[2:4] + WORDS[12:23]),
         "eligibility_keywords": " OR ".join(WILD[4:] + WORDS[23:])}
ALPHABET = " OR ".join(f"{c}*" for c in "abcdefghijklmnopqrstuvwxyz")
ISSUE = {"condition": ALPHABET, "intervention": ALPHABET, "eligibility_keywords": ALPHABET}


def line(label: str, values: list[float]) -> str:
    return (f"  {label:<44} p50 {pct(values, 0.5):8.1f} ms   p99 {pct(values, 0.99):8.1f} ms   "
            f"max {max(values) * 1000:8.1f} ms   (n={len(values)})")


async def sign_in(client: httpx.AsyncClient, name: str) -> None:
    r = await client.post("/api/auth/login", json={"username": name, "password": f"{name}-password"})
    r.raise_for_status()


async def probe(client: httpx.AsyncClient, until: float) -> list[float]:
    times = []
    while time.monotonic() < until:
        start = time.perf_counter()
        (await client.get("/api/health")).raise_for_status()
        times.append(time.perf_counter() - start)
        await asyncio.sleep(0.02)
    return times


async def stream(client: httpx.AsyncClient, arrivals: list[float], stop: asyncio.Event) -> None:
    body = {"message": "Tell me a long story.", "context": {"current_page": "trialscout"}}
    async with client.stream("POST", "/api/chat/stream", json=body, timeout=None) as r:
        r.raise_for_status()
        async for raw in r.aiter_lines():
            if raw.startswith("id:"):
                arrivals.append(time.monotonic())
            if stop.is_set():
                return


def gaps(arrivals: list[float], start: float, end: float) -> list[float]:
    within = [t for t in arrivals if start <= t <= end]
    return [b - a for a, b in zip(within, within[1:], strict=False)] or [0.0]


async def searches(client: httpx.AsyncClient, params: dict[str, str], until: float) -> tuple[list[float], set[int]]:
    took, statuses = [], set()
    while time.monotonic() < until:
        for method, path, kwargs in (("GET", "/api/trials/search", {"params": {**params, "page_size": "100"}}),
                                     ("POST", "/api/stats/trials", {"json": {"search": params}})):
            start = time.perf_counter()
            r = await client.request(method, path, timeout=120, **kwargs)  # type: ignore[arg-type]
            took.append(time.perf_counter() - start)
            statuses.add(r.status_code)
    return took, statuses


async def measure(url: str, seconds: float, params: dict[str, str]) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=60) as prober, \
            httpx.AsyncClient(base_url=url, timeout=60) as reader, httpx.AsyncClient(base_url=url) as searcher:
        await sign_in(reader, "reader")
        await sign_in(searcher, "searcher")
        (await searcher.get("/api/trials/search", params={"condition": "asthma"}, timeout=300)).raise_for_status()
        arrivals: list[float] = []
        stop = asyncio.Event()
        streaming = asyncio.create_task(stream(reader, arrivals, stop))
        while len(arrivals) < 3:
            await asyncio.sleep(0.05)
        t0 = time.monotonic()
        idle = await probe(prober, t0 + seconds / 2)
        t1 = time.monotonic()
        (beside, (took, statuses)) = await asyncio.gather(probe(prober, t1 + seconds),
                                                          searches(searcher, params, t1 + seconds))
        t2 = time.monotonic()
        stop.set()
        streaming.cancel()
        print(line("GET /api/health, idle", idle))
        print(line("GET /api/health, beside the searches", beside))
        print(line("stream's gaps between events, idle", gaps(arrivals, t0, t1)))
        print(line("stream's gaps between events, beside them", gaps(arrivals, t1, t2)))
        print(line(f"the searches themselves (HTTP {sorted(statuses)})", took))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--pace", type=float, default=20, help="text deltas a second on the open stream")
    parser.add_argument("--issue", action="store_true", help="issue 27's search instead of the worst accepted")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    db_url = f"sqlite:///{tmp}/bench.db"
    upgrade(db_url)
    db = Database(db_url)
    with db.session() as s:
        for name in ("reader", "searcher"):
            ensure_user(s, name, f"{name}-password", "user")
    db.dispose()
    fake = subprocess.Popen([sys.executable, "-c", FAKE, str(1 / args.pace)], cwd=Path(__file__).parent.parent,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert fake.stdout is not None
    model_url = fake.stdout.readline().strip()
    port = free_port()
    env = {**os.environ, "DATABASE_URL": db_url, "ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": model_url,
           "COLLEAGUE_DEMO": "0", "COLLEAGUE_SOURCES": "offline", "COLLEAGUE_SEARCHES_PER_MINUTE": "0",
           "COLLEAGUE_TURNS_PER_MINUTE": "0", "COLLEAGUE_DAILY_TOKEN_BUDGET": "0"}
    with open(tmp / "server.log", "ab") as log:
        server = subprocess.Popen([sys.executable, "-m", "backend", "serve", "--host", "127.0.0.1", "--port",
                                   str(port)], cwd=args.root, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(1200):
            try:
                if httpx.get(f"{url}/api/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        print(f"server from {args.root}, {'issue 27' if args.issue else 'the worst accepted'} search, "
              f"a stream at {args.pace:g} deltas a second")
        asyncio.run(measure(url, args.seconds, ISSUE if args.issue else WORST))
    finally:
        server.terminate()
        server.wait(timeout=30)
        fake.kill()
        fake.wait()


if __name__ == "__main__":
    main()
