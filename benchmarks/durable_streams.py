"""Benchmark (not a test): ordinary GETs beside N open streams, and how fast a resume replays.

`python -m backend serve` runs in its own process against the fake Messages API (in a third process,
streaming two words every 50 ms per turn, so N streams stay open). Prints p50/p99 of GET /api/health and
GET /api/conversations idle and beside N streams that are being read, then the resume latency (GET
…/stream with `Last-Event-ID` until the first replayed event) for running turns and for finished ones.

    .venv/bin/python benchmarks/durable_streams.py [--database-url URL] [--streams 100] [--gets 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
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
from tests.live_server import LiveServer  # noqa: E402

FAKE = """
import sys, time
from backend.agent.demo.wire import Reply
from tests.fakes.anthropic_server import Script, start_fake_anthropic
fake, stop = start_fake_anthropic()
fake.default = Script.answer(Reply.text(" ".join(["Still streaming."] * 5000)), delay=0.05)
print(fake.url, flush=True)
sys.stdin.read()
"""


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def line(label: str, values: list[float]) -> str:
    return (f"  {label:<52} p50 {pct(values, 0.5):7.1f} ms   p99 {pct(values, 0.99):8.1f} ms   "
            f"max {max(values) * 1000:8.1f} ms (#{values.index(max(values)) + 1})   (n={len(values)})")


async def gets(client: httpx.AsyncClient, path: str, n: int) -> list[float]:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        r = await client.get(path)
        r.raise_for_status()
        times.append(time.perf_counter() - start)
        await asyncio.sleep(0.01)
    return times


async def open_stream(client: httpx.AsyncClient, i: int, conversations: list[int], texts: dict[int, int]) -> None:
    """One turn, read to its end (a reader that keeps up, as a browser does)."""
    async with client.stream("POST", "/api/chat/stream", json={
            "message": f"question {i}", "context": {"current_page": "tablizer"}}) as r:
        r.raise_for_status()
        kind = ""
        async for raw in r.aiter_lines():
            if raw.startswith("event:"):
                kind = raw.split(":", 1)[1].strip()
            elif raw.startswith("data:") and kind == "conversation":
                conversations.append(json.loads(raw[5:])["conversation_id"])
            elif raw.startswith("data:") and kind == "text_delta":
                texts[i] = texts.get(i, 0) + 1


async def resume_latency(client: httpx.AsyncClient, conversation_id: int, after: int = 1) -> float:
    start = time.perf_counter()
    async with client.stream("GET", f"/api/conversations/{conversation_id}/stream",
                             headers={"Last-Event-ID": str(after)}) as r:
        r.raise_for_status()
        async for raw in r.aiter_lines():
            if raw.startswith("event:"):
                return time.perf_counter() - start
    raise RuntimeError("the resumed stream ended without an event")


async def measure(base: str, streams: int, n_gets: int) -> None:
    limits = httpx.Limits(max_connections=streams + 20, max_keepalive_connections=streams + 20)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as client:
        r = await client.post("/api/auth/login", json={"username": "bench", "password": "bench-pw"})
        r.raise_for_status()
        await gets(client, "/api/health", 20)  # warm-up
        print(line("GET /api/health, idle", await gets(client, "/api/health", n_gets)))
        print(line("GET /api/conversations, idle", await gets(client, "/api/conversations?app=tablizer", n_gets)))

        conversations: list[int] = []
        texts: dict[int, int] = {}
        readers = [asyncio.create_task(open_stream(client, i, conversations, texts)) for i in range(streams)]
        deadline = time.monotonic() + 120
        while len(texts) < streams:  # every stream is answering
            if time.monotonic() > deadline or any(r.done() for r in readers):
                raise RuntimeError(f"only {len(texts)} of {streams} streams are answering")
            await asyncio.sleep(0.1)
        print(line(f"GET /api/health beside {streams} streams", await gets(client, "/api/health", n_gets)))
        print(line(f"GET /api/conversations beside {streams} streams",
                   await gets(client, "/api/conversations?app=tablizer", n_gets)))
        print(line(f"GET /api/health beside {streams} streams, again", await gets(client, "/api/health", n_gets)))
        sample = conversations[: min(50, len(conversations))]
        running = [await resume_latency(client, cid) for cid in sample]
        print(line(f"resume a running turn (beside {streams} streams)", running))

        for cid in conversations:
            await client.post(f"/api/conversations/{cid}/stop")
        await asyncio.wait_for(asyncio.gather(*readers, return_exceptions=True), 60)
        finished = [await resume_latency(client, cid) for cid in sample]
        print(line("resume a finished turn (replayed from the database)", finished))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url")
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--gets", type=int, default=200)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    db_url = args.database_url or f"sqlite:///{tmp}/bench.db"
    upgrade(db_url)
    db = Database(db_url)
    with db.session() as s:
        ensure_user(s, "bench", "bench-pw", "user")
    db.dispose()
    root = Path(__file__).resolve().parent.parent
    fake = subprocess.Popen([sys.executable, "-c", FAKE], cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    assert fake.stdout is not None
    model_url = fake.stdout.readline().strip()
    server = LiveServer(db_url, model_url, tmp / "server.log")
    try:
        server.start()
        print(f"database: {db_url.split('://')[0]}   server: python -m backend serve (1 worker)")
        asyncio.run(measure(server.url, args.streams, args.gets))
    finally:
        server.terminate()
        fake.kill()
        fake.wait()


if __name__ == "__main__":
    main()
