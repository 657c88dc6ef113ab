"""Benchmark (not a test): chat turns over the real HTTP stack against the fake Messages API.

Prints, for 1, 50 and 200 concurrent streams: turns/s, time to first token through the app, the fake
model's own time to first token, the difference (what the app adds), and DB statements per turn.

    .venv/bin/python benchmarks/chat_turns.py [--database-url URL] [--levels 1,50,200] [--delay 0.15]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anthropic
import httpx
from sqlalchemy import event

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.db.migrate import upgrade  # noqa: E402
from backend.demo.wire import Reply  # noqa: E402
from benchmarks.harness import bench_app, serve  # noqa: E402
from tests.fakes.anthropic_server import Script, start_fake_anthropic  # noqa: E402

ANSWER = "EGFR resistance usually arises through T790M, C797S or MET amplification. " * 4


async def direct_ttft(base_url: str, n: int = 20) -> float:
    client = anthropic.AsyncAnthropic(api_key="bench", base_url=base_url, max_retries=0)
    times = []
    for _ in range(n):
        start = time.perf_counter()
        async with client.messages.stream(model="claude-sonnet-4-6", max_tokens=100,
                                          messages=[{"role": "user", "content": "hi"}]) as stream:
            async for ev in stream:
                if ev.type == "text":
                    times.append(time.perf_counter() - start)
                    break
    await client.close()
    return statistics.median(times)


async def one_turn(client: httpx.AsyncClient, i: int) -> float:
    start = time.perf_counter()
    first = None
    async with client.stream("POST", "/api/chat/stream", json={
            "message": f"question {i}", "context": {"current_page": "tablizer", "query": "EGFR"}}) as r:
        r.raise_for_status()
        async for line in r.aiter_lines():
            if first is None and line.startswith("event: text_delta"):
                first = time.perf_counter() - start
            if line.startswith("event: complete") or line.startswith("event: error"):
                if line.startswith("event: error"):
                    raise RuntimeError("turn failed")
    return first if first is not None else float("nan")


async def level(base: str, cookies: httpx.Cookies, n: int) -> tuple[float, float]:
    limits = httpx.Limits(max_connections=n + 5)
    async with httpx.AsyncClient(base_url=base, cookies=cookies, timeout=120, limits=limits) as client:
        start = time.perf_counter()
        ttfts = await asyncio.gather(*(one_turn(client, i) for i in range(n)))
        wall = time.perf_counter() - start
    return n / wall, statistics.median(ttfts)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url")
    parser.add_argument("--levels", default="1,50,200")
    parser.add_argument("--delay", type=float, default=0.0,
                        help="seconds between the fake's frames: turns long enough to checkpoint (0.15: ~2.5 s)")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp()
    db_url = args.database_url or f"sqlite:///{tmp}/bench.db"
    upgrade(db_url)
    fake, stop_fake = start_fake_anthropic()
    fake.default = Script.answer(Reply.text(ANSWER), delay=args.delay)
    app = bench_app(db_url, fake.url)
    statements = {"n": 0}

    def count(*_args: object) -> None:
        statements["n"] += 1

    event.listen(app.state.db.engine, "before_cursor_execute", count)
    port, server, thread = await serve(app)
    base = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient(base_url=base) as c:
        r = await c.post("/api/auth/login", json={"username": "bench", "password": "bench-pw"})
        cookies = r.cookies
    model_ttft = await direct_ttft(fake.url)
    print(f"database: {db_url.split('://')[0]}   fake model's own time to first token: {model_ttft * 1000:.1f} ms")
    print(f"{'streams':>8} {'turns/s':>9} {'app TTFT ms':>12} {'added ms':>9} {'DB stmts/turn':>14}")
    for n in (int(x) for x in args.levels.split(",")):
        await level(base, cookies, 1)  # warm-up
        statements["n"] = 0
        rate, ttft = await level(base, cookies, n)
        per_turn = statements["n"] / n
        print(f"{n:>8} {rate:>9.1f} {ttft * 1000:>12.1f} {(ttft - model_ttft) * 1000:>9.1f} {per_turn:>14.1f}")
    server.should_exit = True
    thread.join(timeout=10)
    stop_fake()


if __name__ == "__main__":
    asyncio.run(main())
