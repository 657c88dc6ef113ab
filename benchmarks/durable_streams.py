"""Benchmark (not a test): ordinary GETs beside N open streams, and how fast a resume replays.

`python -m backend serve` runs in its own process against the fake Messages API (in a third process,
streaming two words every 50 ms per turn, or `--pace` deltas a second, so N streams stay open). Prints
p50/p99 of GET /api/health and GET /api/conversations idle and beside N streams that another process reads,
with how busy the server's core was meanwhile, then the resume latency (GET …/stream with `Last-Event-ID`
until the first replayed event) for running turns and for finished ones.
The user starts with 100 earlier conversations (the list returns as many rows idle as beside the streams);
on two cores or more the server runs alone on the first (see `pin`).

Then the floor: the bare relay (`benchmarks/bare_relay.py`: the same SDK and sse-starlette, no database,
no auth) measured the same way, its GET /health (a sync route: one thread hop, as ours) idle and beside
the same N streams of the same model. What the bare relay's GETs lose beside the streams is the stack's
own event-loop queueing, which no change to Colleague can take away.

    .venv/bin/python benchmarks/durable_streams.py [--database-url URL] [--streams 100] [--gets 1000]
        [--pace 20] [--no-bare]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path

import httpx
from sqlalchemy import select

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.auth.service import ensure_user  # noqa: E402
from backend.db.migrate import upgrade  # noqa: E402
from backend.db.models import Conversation, User  # noqa: E402
from backend.db.session import Database  # noqa: E402
from benchmarks.harness import free_port  # noqa: E402
from benchmarks.relay_vs_colleague import cpu_seconds  # noqa: E402
from tests.live_server import LiveServer  # noqa: E402

CORES = sorted(os.sched_getaffinity(0))  # before `pin` moves this process off the first
LOAD_NICE, CLIENT_NICE = 5, -10  # see `pin`
FAKE = """
import sys, time
from backend.demo.wire import Reply
from tests.fakes.anthropic_server import Script, start_fake_anthropic
fake, stop = start_fake_anthropic()
fake.default = Script.answer(Reply.text(" ".join(["Still streaming."] * 5000)), delay=float(sys.argv[1]))
print(fake.url, flush=True)
sys.stdin.read()
"""


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def line(label: str, values: list[float], busy: float | None = None) -> str:
    return (f"  {label:<52} p50 {pct(values, 0.5):7.1f} ms   p99 {pct(values, 0.99):8.1f} ms   "
            f"max {max(values) * 1000:8.1f} ms (#{values.index(max(values)) + 1})   (n={len(values)})"
            + ("" if busy is None else f"   server {busy:4.0%} of its core"))


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


async def measured(label: str, client: httpx.AsyncClient, path: str, n: int, server_pid: int) -> str:
    """A line of GETs, with how busy the server was meanwhile (its CPU seconds per second: near 100% a
    request waits behind whatever else became ready, and the tail grows fast)."""
    cpu, start = cpu_seconds(server_pid)[0], time.monotonic()
    times = await gets(client, path, n)
    return line(label, times, (cpu_seconds(server_pid)[0] - cpu) / (time.monotonic() - start))


async def resume_latency(client: httpx.AsyncClient, conversation_id: int, after: int = 1) -> float:
    start = time.perf_counter()
    async with client.stream("GET", f"/api/conversations/{conversation_id}/stream",
                             headers={"Last-Event-ID": str(after)}) as r:
        r.raise_for_status()
        async for raw in r.aiter_lines():
            if raw.startswith("event:"):
                return time.perf_counter() - start
    raise RuntimeError("the resumed stream ended without an event")


def read_streams(base: str, streams: int, ready: Connection, done: Connection) -> None:
    """The load, in a process of its own: N streams read to their end, so that the GETs measured below
    wait for the server only, not for a client loop busy parsing 2,000 events a second."""

    os.setpriority(os.PRIO_PROCESS, 0, LOAD_NICE)  # the load yields to the GETs being measured (see `pin`)

    async def run() -> None:
        limits = httpx.Limits(max_connections=streams + 5, max_keepalive_connections=streams + 5)
        async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as client:
            await login(client)
            conversations: list[int] = []
            texts: dict[int, int] = {}
            readers = [asyncio.create_task(open_stream(client, i, conversations, texts)) for i in range(streams)]
            deadline = time.monotonic() + 120
            while len(texts) < streams:  # every stream is answering
                if time.monotonic() > deadline or any(r.done() for r in readers):
                    raise RuntimeError(f"only {len(texts)} of {streams} streams are answering")
                await asyncio.sleep(0.1)
            ready.send(conversations)
            await asyncio.get_running_loop().run_in_executor(None, done.recv)  # the GETs are measured
            for cid in conversations:
                await client.post(f"/api/conversations/{cid}/stop")
            await asyncio.wait_for(asyncio.gather(*readers, return_exceptions=True), 60)

    asyncio.run(run())


async def login(client: httpx.AsyncClient) -> None:
    r = await client.post("/api/auth/login", json={"username": "bench", "password": "bench-pw"})
    r.raise_for_status()


async def measure(base: str, server_pid: int, streams: int, n_gets: int) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=120) as client:
        await login(client)
        await gets(client, "/api/health", 20)  # warm-up
        print(await measured("GET /api/health, idle", client, "/api/health", n_gets, server_pid))
        print(await measured("GET /api/conversations, idle", client, "/api/conversations?app=tablizer", n_gets,
                             server_pid))

        ready, ready_child = multiprocessing.Pipe(duplex=False)
        done_child, done = multiprocessing.Pipe(duplex=False)
        load = multiprocessing.Process(target=read_streams, args=(base, streams, ready_child, done_child))
        load.start()
        conversations: list[int] = await asyncio.get_running_loop().run_in_executor(None, ready.recv)
        print(await measured(f"GET /api/health beside {streams} streams", client, "/api/health", n_gets, server_pid))
        print(await measured(f"GET /api/conversations beside {streams} streams", client,
                             "/api/conversations?app=tablizer", n_gets, server_pid))
        print(await measured(f"GET /api/health beside {streams} streams, again", client, "/api/health", n_gets,
                             server_pid))
        sample = conversations[: min(50, len(conversations))]
        running = [await resume_latency(client, cid) for cid in sample]
        print(line(f"resume a running turn (beside {streams} streams)", running))

        done.send(True)
        await asyncio.get_running_loop().run_in_executor(None, load.join, 90)
        finished = [await resume_latency(client, cid) for cid in sample]
        print(line("resume a finished turn (replayed from the database)", finished))


def read_bare_streams(base: str, streams: int, ready: Connection, done: Connection) -> None:
    """The bare relay's load: N streams that keep reading until the GETs are measured, then leave."""
    os.setpriority(os.PRIO_PROCESS, 0, LOAD_NICE)

    async def run() -> None:
        limits = httpx.Limits(max_connections=streams + 5, max_keepalive_connections=streams + 5)
        async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as client:
            answering: set[int] = set()

            async def one(i: int) -> None:
                async with client.stream("POST", "/relay", json={"message": f"question {i}"}) as r:
                    r.raise_for_status()
                    async for raw in r.aiter_lines():
                        if raw.startswith("event: text_delta"):
                            answering.add(i)

            readers = [asyncio.create_task(one(i)) for i in range(streams)]
            deadline = time.monotonic() + 120
            while len(answering) < streams:
                if time.monotonic() > deadline or any(r.done() for r in readers):
                    raise RuntimeError(f"only {len(answering)} of {streams} bare streams are answering")
                await asyncio.sleep(0.1)
            ready.send(True)
            await asyncio.get_running_loop().run_in_executor(None, done.recv)
            for reader in readers:
                reader.cancel()
            await asyncio.gather(*readers, return_exceptions=True)

    asyncio.run(run())


async def measure_bare(base: str, server_pid: int, streams: int, n_gets: int) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=120) as client:
        await gets(client, "/health", 20)  # warm-up
        print(await measured("bare relay: GET /health, idle", client, "/health", n_gets, server_pid))
        ready, ready_child = multiprocessing.Pipe(duplex=False)
        done_child, done = multiprocessing.Pipe(duplex=False)
        load = multiprocessing.Process(target=read_bare_streams, args=(base, streams, ready_child, done_child))
        load.start()
        await asyncio.get_running_loop().run_in_executor(None, ready.recv)
        print(await measured(f"bare relay: GET /health beside {streams} streams", client, "/health", n_gets,
                             server_pid))
        print(await measured(f"bare relay: GET /health beside {streams} streams, again", client, "/health",
                             n_gets, server_pid))
        done.send(True)
        await asyncio.get_running_loop().run_in_executor(None, load.join, 30)


def bare_relay(root: Path, model_url: str, fake: subprocess.Popen[str], streams: int, n_gets: int) -> None:
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(root / "benchmarks" / "bare_relay.py"), "--port", str(port),
                             "--model-url", model_url], cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{base}/health", timeout=1).raise_for_status()
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("the bare relay did not start") from None
                time.sleep(0.2)
        print(f"bare relay (the floor): benchmarks/bare_relay.py, {pin(proc.pid, fake)}")
        asyncio.run(measure_bare(base, proc.pid, streams, n_gets))
    finally:
        proc.kill()
        proc.wait()


def pin(server_pid: int, fake: subprocess.Popen[str]) -> str:
    """The server alone on core 0; this process, the stub and the readers on the others, the stub and the
    readers niced below the GETs: what is measured is the server's wait, not the load's processes
    queueing for the same core as the client that measures. Where allowed (root, or CAP_SYS_NICE), the
    client that measures runs above normal priority too: beside the readers parsing 2,000 events a second,
    a client at nice 0 waited for its core often enough to add milliseconds to the p99 of a GET."""
    cores = CORES
    if len(cores) < 2:
        return "not pinned (one core)"
    os.sched_setaffinity(server_pid, {cores[0]})
    os.sched_setaffinity(0, set(cores[1:]))
    os.sched_setaffinity(fake.pid, set(cores[1:]))
    os.setpriority(os.PRIO_PROCESS, fake.pid, LOAD_NICE)
    try:
        os.setpriority(os.PRIO_PROCESS, 0, CLIENT_NICE)
        client = f"the measuring client at nice {CLIENT_NICE}"
    except PermissionError:
        client = "the measuring client at nice 0 (raising it needs CAP_SYS_NICE)"
    return f"pinned to core {cores[0]}, the load on {','.join(map(str, cores[1:]))} at nice {LOAD_NICE}, {client}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url")
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--gets", type=int, default=1000)  # p99: the 11th slowest, not the 2nd
    parser.add_argument("--pace", type=float, default=20, help="text deltas a second per stream")
    parser.add_argument("--no-bare", action="store_true", help="skip the bare relay's floor")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    db_url = args.database_url or f"sqlite:///{tmp}/bench.db"
    upgrade(db_url)
    db = Database(db_url)
    with db.session() as s:
        ensure_user(s, "bench", "bench-pw", "user")
        # Earlier conversations, so that the list (at most 100) is as long idle as beside the streams.
        user_id = s.scalars(select(User.id).where(User.username == "bench")).one()
        s.add_all([Conversation(user_id=user_id, app="tablizer", title=f"earlier {i}") for i in range(100)])
    db.dispose()
    root = Path(__file__).resolve().parent.parent
    fake = subprocess.Popen([sys.executable, "-c", FAKE, str(1 / args.pace)], cwd=root, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert fake.stdout is not None
    model_url = fake.stdout.readline().strip()
    server = LiveServer(db_url, model_url, tmp / "server.log")
    try:
        server.start()
        assert server.proc is not None
        print(f"database: {db_url.split('://')[0]}, streams of {args.pace:g} deltas a second   "
              f"server: python -m backend serve (1 worker), "
              f"{pin(server.proc.pid, fake)}")
        asyncio.run(measure(server.url, server.proc.pid, args.streams, args.gets))
        server.terminate()
        if not args.no_bare:
            bare_relay(root, model_url, fake, args.streams, args.gets)
    finally:
        server.terminate()
        fake.kill()
        fake.wait()


if __name__ == "__main__":
    main()
