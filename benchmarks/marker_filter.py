"""Benchmark (not a test): the streaming marker filter on a 16 KB card, alone and inside the app.

1. In process: the time to stream an answer holding a 16 KB SCHEMA_PROPOSAL card through `MarkerFilter`
   in 4-character deltas (target: under 20 ms in total), and 64 KB for the growth.
2. Through the app under uvicorn, against a small fake Messages API that sends that answer in
   4-character `text_delta`s as fast as it can (in its own process): `/api/health` latency while the turn
   streams, next to the idle latency, and how long the app's `MarkerFilter.feed` calls took. The filter
   runs on the event loop: its longest call bounds what it can add to another request's latency.

    .venv/bin/python benchmarks/marker_filter.py [--turns 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.auth.service import ensure_user  # noqa: E402
from backend.chat.markers import SUGGESTED_ACTIONS, SUGGESTED_VALUES, MarkerFilter  # noqa: E402
from backend.config import Settings  # noqa: E402
from backend.db.migrate import upgrade  # noqa: E402
from backend.demo.wire import Reply, frame, message_end, message_start  # noqa: E402
from backend.main import create_app  # noqa: E402
from backend.registry import resolve  # noqa: E402
from backend.registry.builtins import load_builtins  # noqa: E402

CONTEXT = {"current_page": "edit_research_stream", "active_tab": "semantic"}
PIECE = 4
SIZES = (16 * 1024, 64 * 1024)


def answer(card_bytes: int) -> str:
    """Prose, then a valid SCHEMA_PROPOSAL card whose JSON is `card_bytes` long, then more prose."""
    topics = [f"EGFR resistance mechanism {i}: T790M, C797S, MET amplification" for i in range(card_bytes // 80)]
    card = {"proposed_changes": {"topics": topics}, "confidence": "high", "reasoning": ""}
    card["reasoning"] = "x" * (card_bytes - len(json.dumps(card)))
    assert len(json.dumps(card)) == card_bytes
    return f"Here is a proposal for the stream.\n\nSCHEMA_PROPOSAL: {json.dumps(card)}\n\nAccept it if it helps."


def markers() -> list[str]:
    resolved = resolve(CONTEXT["current_page"], CONTEXT["active_tab"], None)
    return [*(p.parse_marker for p in resolved.llm_payloads if p.parse_marker), SUGGESTED_VALUES, SUGGESTED_ACTIONS]


def filter_ms(text: str, runs: int = 20) -> tuple[float, float, float]:
    """Milliseconds to stream `text` through a fresh MarkerFilter in PIECE-character deltas: (median wall
    time, best wall time, best CPU time; on a busy machine the CPU time is the steadier number)."""
    chunks = [text[i:i + PIECE] for i in range(0, len(text), PIECE)]
    names = markers()
    wall, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        text_filter = MarkerFilter(names)
        shown = "".join(text_filter.feed(c) for c in chunks) + text_filter.flush()
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
        assert "SCHEMA_PROPOSAL" not in shown
    return statistics.median(wall), min(wall), min(cpu)


def fake_model(text: str) -> Starlette:
    """A Messages API that streams `text` in PIECE-character deltas, without pauses."""
    async def messages(request: Request) -> StreamingResponse:
        await request.json()
        reply = Reply.text(text, input_tokens=500, output_tokens=len(text) // 4)

        async def frames() -> AsyncIterator[bytes]:
            yield message_start("claude-fake", reply)
            yield frame("content_block_start", {"type": "content_block_start", "index": 0,
                                                "content_block": {"type": "text", "text": ""}})
            for i in range(0, len(text), PIECE):
                yield frame("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                    "delta": {"type": "text_delta", "text": text[i:i + PIECE]}})
            yield frame("content_block_stop", {"type": "content_block_stop", "index": 0})
            for chunk in message_end(reply):
                yield chunk

        return StreamingResponse(frames(), media_type="text/event-stream")

    return Starlette(routes=[Route("/v1/messages", messages, methods=["POST"])])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_fake_model(port: int, text: str) -> None:
    uvicorn.run(fake_model(text), host="127.0.0.1", port=port, log_level="warning")


def start_fake_model(text: str) -> tuple[str, multiprocessing.process.BaseProcess]:
    """The fake model in its own process, so its streaming does not share the app's interpreter."""
    port = free_port()
    process = multiprocessing.get_context("spawn").Process(target=run_fake_model, args=(port, text), daemon=True)
    process.start()
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return f"http://127.0.0.1:{port}", process
        except OSError:
            if time.monotonic() > deadline or not process.is_alive():
                raise
            time.sleep(0.05)


def serve(app: object) -> tuple[str, uvicorn.Server, threading.Thread]:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",  # type: ignore[arg-type]
                                           lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    return f"http://127.0.0.1:{port}", server, thread


async def health_ms(client: httpx.AsyncClient) -> float:
    start = time.perf_counter()
    (await client.get("/api/health")).raise_for_status()
    return (time.perf_counter() - start) * 1000


async def turn_with_health(client: httpx.AsyncClient) -> tuple[float, list[float]]:
    """Stream one turn; meanwhile poll /api/health. (turn seconds, health latencies in ms)."""
    done = asyncio.Event()
    latencies: list[float] = []

    async def poll() -> None:
        while not done.is_set():
            latencies.append(await health_ms(client))

    async def turn() -> float:
        start = time.perf_counter()
        try:
            async with client.stream("POST", "/api/chat/stream",
                                     json={"message": "propose topics", "context": CONTEXT}) as r:
                r.raise_for_status()
                async for line in r.aiter_lines():
                    if line.startswith(("event: complete", "event: error")):
                        assert line == "event: complete", line
            return time.perf_counter() - start
        finally:
            done.set()

    poller = asyncio.create_task(poll())
    seconds = await turn()
    await poller
    return seconds, latencies


@contextmanager
def timed_feeds() -> Iterator[list[float]]:
    """How long each MarkerFilter.feed call of the app takes (seconds): the event loop is blocked that
    long, so the longest call bounds what the filter can add to any other request's latency."""
    calls: list[float] = []
    feed = MarkerFilter.feed

    def timed(self: MarkerFilter, delta: str) -> str:
        start = time.perf_counter()
        try:
            return feed(self, delta)
        finally:
            calls.append(time.perf_counter() - start)

    MarkerFilter.feed = timed  # type: ignore[method-assign]
    try:
        yield calls
    finally:
        MarkerFilter.feed = feed  # type: ignore[method-assign]


async def through_the_app(text: str, turns: int) -> None:
    tmp = tempfile.mkdtemp()
    db_url = f"sqlite:///{tmp}/bench.db"
    upgrade(db_url)
    model_url, model = start_fake_model(text)
    app = create_app(Settings(DATABASE_URL=db_url, ANTHROPIC_API_KEY="bench", ANTHROPIC_BASE_URL=model_url))
    with app.state.db.session() as s:
        ensure_user(s, "bench", "bench-pw", "user")
    base, server, thread = serve(app)
    try:
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            (await client.post("/api/auth/login", json={"username": "bench", "password": "bench-pw"})
             ).raise_for_status()
            idle = [await health_ms(client) for _ in range(20)]
            print(f"/api/health idle: median {statistics.median(idle):.1f} ms, max {max(idle):.1f} ms")
            for n in range(1, turns + 1):
                with timed_feeds() as feeds:
                    seconds, during = await turn_with_health(client)
                print(f"turn {n}: a 16 KB card in {PIECE}-char deltas in {seconds:.2f} s; "
                      f"/api/health meanwhile ({len(during)} calls): median {statistics.median(during):.1f} ms, "
                      f"max {max(during):.1f} ms")
                print(f"        MarkerFilter.feed in the app: {len(feeds)} calls, {sum(feeds) * 1000:.1f} ms in all, "
                      f"the longest {max(feeds) * 1e6:.0f} µs")
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        model.terminate()
        model.join(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=3)
    args = parser.parse_args()
    load_builtins()
    for size in SIZES:
        text = answer(size)
        median, best, cpu = filter_ms(text)
        print(f"MarkerFilter, {size // 1024} KB card in {PIECE}-char deltas: median {median:.1f} ms, "
              f"best {best:.1f} ms, best CPU {cpu:.1f} ms" + ("   (target < 20 ms)" if size == 16 * 1024 else ""))
    asyncio.run(through_the_app(answer(16 * 1024), args.turns))


if __name__ == "__main__":
    main()
