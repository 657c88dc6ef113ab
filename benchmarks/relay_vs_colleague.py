"""Benchmark (not a test): Colleague's stream path against a bare relay, in one run, on one stub model.

Three kinds of process: a stub Messages API (300 ms to the first token, then 100 text deltas at 10/s, or
`--rate`, sent `--burst` at a time as network reads often deliver them), the
servers under test — `benchmarks/bare_relay.py` (the same SDK and sse-starlette, nothing else) and
`python -m backend serve` (one worker, quotas off, one seeded user) — and this load generator. On a
machine with two cores or more the server is pinned to core 0 and the stub and the load to core 1
(`taskset`). For each level N the streams are opened over `--ramp` seconds, each read to its end; each
server is started fresh per level and warmed up first. Printed per level and server:

- TTFT p50/p99: from sending the request to the first delta's text;
- deltas/s: text deltas received (counted in the text, so frames that carry several count as several),
  over the time from the first request to the last stream's end; frames/s: `text_delta` frames received
  (fewer than deltas when the server coalesces them: COLLEAGUE_COALESCE_MS);
- errors: a refused or broken stream, an `error` event, or a stream whose text is not all 100 deltas;
- server CPU µs per delta (utime + stime of the server's processes, /proc/<pid>/stat), and `loop`: the
  main threads' part of it (/proc/<pid>/task/<pid>/stat), the event loop; in the ratios, `loop` and
  `threads` split Colleague's CPU/Δ ratio into the event loop's and its threads' (database work) shares;
- RSS KB per open stream (the server's peak resident memory during the level minus before it, over N);
- and Colleague/bare for each.

`--workers 1,2` adds Colleague at the highest N with each further worker count (those servers are not
pinned: they may use every core, which here they share with the stub and the load).

`--observability` adds, at each level, Colleague with its metrics and tracing on (COLLEAGUE_METRICS_TOKEN
set, OTEL_EXPORTER_OTLP_ENDPOINT at the stub, which accepts the span batches as an OTLP/HTTP collector
would), and prints its CPU per delta against Colleague's with them off, measured in the same run.

    .venv/bin/python benchmarks/relay_vs_colleague.py [--db sqlite|postgres] [--levels 200,400]
        [--ramp 10] [--rate 10] [--burst 1] [--workers 1] [--env NAME=VALUE ...] [--observability]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DELTAS = 100
DELTA_TEXT = "lorem "  # every delta; the load counts b"lorem" in what it receives
FIRST_TOKEN_S = 0.3
FRAME = b"event: text_delta"
TERMINALS = (b"event: complete", b"event: error")
PG_ADMIN = os.environ.get("COLLEAGUE_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")

# -- the stub model ------------------------------------------------------------------------------------


def run_stub(port: int, rate: float, burst: int) -> None:
    """A Messages API that streams DELTAS text deltas at `rate` a second, `burst` at a time, on a fixed
    schedule (drift-free under load). A request whose body says `warmup` is answered at once."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route

    from backend.demo.wire import Reply, frame, message_start

    def block(kind: str, data: dict[str, object]) -> bytes:
        return frame(kind, {"type": kind, **data})

    start_block = block("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})
    delta = block("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": DELTA_TEXT}})
    end = (block("content_block_stop", {"index": 0})
           + block("message_delta", {"delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                     "usage": {"output_tokens": DELTAS}})
           + block("message_stop", {}))

    async def messages(request: Request) -> StreamingResponse:
        body = await request.body()
        fast = b"warmup" in body

        async def frames() -> object:
            t0 = time.monotonic()
            yield message_start("claude-stub", Reply(input_tokens=100))
            yield start_block
            for i in range(DELTAS):
                if not fast and i % burst == 0:
                    await asyncio.sleep(max(0.0, t0 + FIRST_TOKEN_S + i / rate - time.monotonic()))
                yield delta
            yield end

        return StreamingResponse(frames(), media_type="text/event-stream")  # type: ignore[arg-type]

    exported = {"batches": 0}

    async def traces(request: Request) -> Response:  # an OTLP/HTTP collector that keeps nothing
        await request.body()
        exported["batches"] += 1
        return Response(b"", media_type="application/x-protobuf")

    async def count(_request: Request) -> Response:
        return Response(str(exported["batches"]))

    app = Starlette(routes=[Route("/v1/messages", messages, methods=["POST"]),
                            Route("/v1/traces", traces, methods=["POST"]), Route("/traces", count)])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="critical", lifespan="off")


# -- processes -----------------------------------------------------------------------------------------


def free_port() -> int:
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pinned(cores: str | None, argv: list[str]) -> list[str]:
    return ["taskset", "-c", cores, *argv] if cores else argv


def tree(pid: int) -> list[int]:
    """`pid` and its descendants (uvicorn's workers are child processes)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def cpu_seconds(pid: int) -> tuple[float, float]:
    """CPU seconds (utime + stime) of `pid`'s process tree, and of its processes' main threads alone (the
    event loops; the rest is their threads: database work, thread hops)."""
    total = loops = 0
    for p in tree(pid):
        for path, main in ((f"/proc/{p}/stat", False), (f"/proc/{p}/task/{p}/stat", True)):
            try:
                fields = Path(path).read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
            if main:
                loops += ticks
            else:
                total += ticks
    return total / os.sysconf("SC_CLK_TCK"), loops / os.sysconf("SC_CLK_TCK")


def rss_kb(pid: int) -> int:
    total = 0
    for p in tree(pid):
        try:
            total += int(Path(f"/proc/{p}/statm").read_text().split()[1])
        except OSError:
            continue
    return total * os.sysconf("SC_PAGE_SIZE") // 1024


@dataclass
class Server:
    name: str
    argv: list[str]
    env: dict[str, str]
    port: int
    path: str
    body: dict[str, object]
    log: Path
    cookie: str = ""
    proc: subprocess.Popen[bytes] | None = None

    def start(self, health: str) -> None:
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(self.argv, cwd=ROOT, env={**os.environ, **self.env}, stdout=out,
                                         stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}{health}", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"{self.name} did not start: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# -- the load ------------------------------------------------------------------------------------------


@dataclass
class Stream:
    ttft: float | None = None
    deltas: int = 0
    frames: int = 0
    ended: float = 0.0
    error: str | None = None


async def one_stream(server: Server, message: str) -> Stream:
    """One POST read to its end over a raw socket (httpx would cost the load core more than the server
    under test spends); counts DELTA_TEXT in the bytes before the terminal event."""
    result = Stream()
    body = json.dumps({**server.body, "message": message}).encode()
    head = (f"POST {server.path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nAccept: text/event-stream\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n"
            + (f"Cookie: {server.cookie}\r\n" if server.cookie else "") + "\r\n").encode()
    token = DELTA_TEXT.strip().encode()
    start = time.perf_counter()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    except OSError as err:
        result.error = f"connect: {err}"
        return result
    try:
        writer.write(head + body)
        status = await reader.readline()
        if b" 200 " not in status:
            result.error = status.decode(errors="replace").strip()
            return result
        tail, done = b"", None  # tail: the last bytes read, where a token or terminal may have begun
        while done is None:
            chunk = await reader.read(65536)
            if not chunk:
                break
            buf = tail + chunk
            ends = [i for i in (buf.find(t) for t in TERMINALS) if i != -1]
            cut = min(ends) if ends else len(buf)
            seen = buf.count(token, max(0, len(tail) - len(token) + 1), cut)  # not those counted before
            result.frames += buf.count(FRAME, max(0, len(tail) - len(FRAME) + 1), cut)
            if seen and result.ttft is None:
                result.ttft = time.perf_counter() - start
            result.deltas += seen
            if ends:
                done = buf[cut:cut + 20]
            tail = buf[-20:]
        result.ended = time.perf_counter()
        if done is None:
            result.error = "ended without a terminal event"
        elif done.startswith(b"event: error"):
            result.error = "error event"
        elif result.deltas != DELTAS:
            result.error = f"{result.deltas} of {DELTAS} deltas"
    except OSError as err:
        result.error = f"read: {err}"
    finally:
        writer.close()
    return result


@dataclass
class Level:
    n: int
    ttfts: list[float] = field(default_factory=list)
    deltas: int = 0
    frames: int = 0
    errors: int = 0
    wall: float = 0.0
    cpu_us_per_delta: float = 0.0
    loop_us_per_delta: float = 0.0  # of that, the event loops' (main threads') share
    rss_kb_per_stream: float = 0.0
    first_error: str | None = None

    def pct(self, q: float) -> float:
        if not self.ttfts:
            return float("nan")
        ordered = sorted(self.ttfts)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000

    @property
    def rate(self) -> float:
        return self.deltas / self.wall if self.wall else 0.0

    @property
    def frame_rate(self) -> float:
        return self.frames / self.wall if self.wall else 0.0


async def drive(server: Server, n: int, ramp: float, profile: Path | None = None) -> Level:
    assert server.proc is not None
    pid = server.proc.pid
    await asyncio.gather(*(one_stream(server, f"warmup {i}") for i in range(5)))
    await asyncio.sleep(0.5)
    spy = None
    # py-spy (pip install py-spy): collapsed stacks of the server's processes, sampled only while a thread
    # holds the interpreter (`--gil`): Python's CPU, not a database thread's wait for its answer.
    if profile is not None:
        spy = subprocess.Popen(["py-spy", "record", "--pid", str(pid), "--subprocesses", "--nonblocking", "--gil",
                                "--rate", "200", "--format", "raw", "--output", str(profile)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rss0, (cpu0, loop0) = rss_kb(pid), cpu_seconds(pid)
    peak = rss0
    t0 = time.perf_counter()

    async def later(i: int) -> Stream:
        await asyncio.sleep(i * ramp / n)
        return await one_stream(server, f"question {i}")

    tasks = [asyncio.create_task(later(i)) for i in range(n)]
    while not all(t.done() for t in tasks):
        peak = max(peak, rss_kb(pid))
        await asyncio.wait(tasks, timeout=0.5)
    cpu1, loop1 = cpu_seconds(pid)
    if spy is not None:
        spy.send_signal(signal.SIGINT)
        spy.wait(30)
    out = Level(n=n)
    ends = []
    for t in tasks:
        s = t.result()
        out.deltas += s.deltas
        out.frames += s.frames
        if s.ttft is not None:
            out.ttfts.append(s.ttft)
        if s.error:
            out.errors += 1
            out.first_error = out.first_error or s.error
        ends.append(s.ended or time.perf_counter())
    out.wall = max(ends) - t0
    out.cpu_us_per_delta = (cpu1 - cpu0) * 1e6 / out.deltas if out.deltas else float("nan")
    out.loop_us_per_delta = (loop1 - loop0) * 1e6 / out.deltas if out.deltas else float("nan")
    out.rss_kb_per_stream = (peak - rss0) / n
    return out


# -- the run -------------------------------------------------------------------------------------------


def make_database(kind: str, tmp: Path) -> tuple[str, object]:
    """A fresh database with the schema and the benchmark's user; returns its URL and a cleanup."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    from backend.auth.service import ensure_user
    from backend.db.migrate import upgrade
    from backend.db.session import Database

    if kind == "sqlite":
        url = f"sqlite:///{tmp}/bench.db"

        def drop() -> None:
            pass
    else:
        name = f"relay_bench_{os.getpid()}"
        admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
        with admin.connect() as c:
            c.execute(text(f'CREATE DATABASE "{name}"'))
        url = make_url(PG_ADMIN).set(database=name).render_as_string(hide_password=False)

        def drop() -> None:
            with admin.connect() as c:
                c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            admin.dispose()
    upgrade(url)
    db = Database(url)
    with db.session() as s:
        ensure_user(s, "bench", "bench-pw", "user")
    db.dispose()
    return url, drop


def row(label: str, level: Level) -> str:
    err = f" ({level.first_error})" if level.first_error else ""
    return (f"  {label:<16} {level.n:>5} {level.pct(0.5):>8.0f} {level.pct(0.99):>8.0f} {level.rate:>9.0f} "
            f"{level.frame_rate:>9.0f} "
            f"{level.errors:>6} {level.cpu_us_per_delta:>9.0f} {level.loop_us_per_delta:>7.0f} "
            f"{level.rss_kb_per_stream:>9.0f}{err}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--levels", default="200,400", help="open streams per level, comma-separated")
    parser.add_argument("--ramp", type=float, default=10.0, help="seconds over which a level's streams open")
    parser.add_argument("--rate", type=float, default=10.0, help="text deltas a second the stub streams")
    parser.add_argument("--burst", type=int, default=1, help="deltas the stub sends together (at the same rate)")
    parser.add_argument("--workers", default="1", help="Colleague worker counts, comma-separated; the extra "
                                                       "counts run at the highest level")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="extra environment for Colleague (to compare a setting)")
    parser.add_argument("--observability", action="store_true",
                        help="also run Colleague with metrics and tracing on, and compare its CPU per delta")
    parser.add_argument("--profile", type=Path, metavar="DIR",
                        help="record each server and level with py-spy into DIR (collapsed stacks)")
    parser.add_argument("--stub", type=int, help=argparse.SUPPRESS)  # internal: run the stub on this port
    args = parser.parse_args()
    if args.stub:
        run_stub(args.stub, args.rate, args.burst)
        return
    levels = [int(x) for x in args.levels.split(",")]
    worker_counts = [int(x) for x in args.workers.split(",")]
    cores = os.sched_getaffinity(0)
    split = len(cores) >= 2 and subprocess.run(["which", "taskset"], capture_output=True).returncode == 0
    server_core, load_core = (str(min(cores)), str(max(cores))) if split else (None, None)
    if load_core is not None:
        os.sched_setaffinity(0, {int(load_core)})
    try:
        import uvloop
        uvloop.install()
    except ImportError:
        pass

    tmp = Path(tempfile.mkdtemp(prefix="relay-bench-"))
    db_url, drop = make_database(args.db, tmp)
    stub_port = free_port()
    stub = subprocess.Popen(pinned(load_core, [sys.executable, __file__, "--stub", str(stub_port), "--rate",
                                               str(args.rate), "--burst", str(args.burst)]), cwd=ROOT)
    model_url = f"http://127.0.0.1:{stub_port}"
    colleague_env = {"DATABASE_URL": db_url, "ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": model_url,
                     "COLLEAGUE_DEMO": "0", "COLLEAGUE_SOURCES": "offline", "COLLEAGUE_MAX_CONCURRENT_STREAMS": "0",
                     "COLLEAGUE_TURNS_PER_MINUTE": "0", "COLLEAGUE_DAILY_TOKEN_BUDGET": "0",
                     **dict(e.split("=", 1) for e in args.env)}

    def bare() -> Server:
        port = free_port()
        return Server("bare relay", pinned(server_core, [sys.executable, str(ROOT / "benchmarks/bare_relay.py"),
                                                         "--port", str(port), "--model-url", model_url]),
                      {}, port, "/relay", {}, tmp / "bare.log")

    observed_env = {"COLLEAGUE_METRICS_TOKEN": "bench", "OTEL_EXPORTER_OTLP_ENDPOINT": model_url,
                    "OTEL_SERVICE_NAME": "colleague-bench"}

    def colleague(workers: int, observed: bool = False) -> Server:
        port = free_port()
        argv = [sys.executable, "-m", "backend", "serve", "--port", str(port), "--workers", str(workers)]
        return Server(f"Colleague ×{workers}" + (" +obs" if observed else ""),
                      pinned(server_core if workers == 1 else None, argv),
                      {**colleague_env, **(observed_env if observed else {})}, port, "/api/chat/stream",
                      {"context": {"current_page": "tablizer"}}, tmp / "colleague.log")

    def measure(server: Server, n: int, health: str) -> Level:
        server.start(health)
        try:
            if server.path.startswith("/api"):
                r = httpx.post(f"http://127.0.0.1:{server.port}/api/auth/login",
                               json={"username": "bench", "password": "bench-pw"})
                r.raise_for_status()
                server.cookie = "; ".join(f"{k}={v}" for k, v in r.cookies.items())
            profile = None
            if args.profile:
                args.profile.mkdir(parents=True, exist_ok=True)
                kind = server.name.lower().replace(" ×", "-").replace(" +", "-") if server.path.startswith("/api") \
                    else "bare"
                profile = args.profile / f"{kind}-{n}.txt"
            return asyncio.run(drive(server, n, args.ramp, profile))
        finally:
            server.stop()

    pin = (f"server on core {server_core}, stub and load on core {load_core}" if split
           else "not pinned (one core, or no taskset)")
    print(f"database: {args.db}   stub: {FIRST_TOKEN_S * 1000:.0f} ms to first token, {DELTAS} deltas at "
          f"{args.rate:g}/s, {args.burst} at a time   ramp: {args.ramp:.0f} s   {pin}")
    print(f"  {'server':<16} {'N':>5} {'TTFT p50':>8} {'p99 ms':>8} {'deltas/s':>9} {'frames/s':>9} {'errors':>6} "
          f"{'CPU µs/Δ':>9} {'loop':>7} {'RSS KB/s':>9}")
    results: list[tuple[Level, Level]] = []
    observed: list[tuple[Level, Level]] = []  # (off, on) at each level
    try:
        for n in levels:
            b = measure(bare(), n, "/health")
            print(row("bare relay", b), flush=True)
            c = measure(colleague(worker_counts[0]), n, "/api/health")
            print(row(f"Colleague ×{worker_counts[0]}", c), flush=True)
            results.append((b, c))
            if args.observability:
                o = measure(colleague(worker_counts[0], observed=True), n, "/api/health")
                print(row(f"Colleague ×{worker_counts[0]} +obs", o), flush=True)
                observed.append((c, o))
        batches = httpx.get(f"{model_url}/traces").text if args.observability else "0"
        extra = [(w, measure(colleague(w), levels[-1], "/api/health")) for w in worker_counts[1:]]
        for w, level in extra:
            print(row(f"Colleague ×{w}", level), flush=True)
    finally:
        stub.terminate()
        stub.wait()
        drop()  # type: ignore[operator]

    print("\nColleague / bare (targets: deltas/s ≥ 0.95, TTFT p50 ≤ bare + 15 ms, p99 ≤ 1.2, CPU/Δ ≤ 1.15, "
          "RSS/stream ≤ 1.3, 0 errors)")
    print(f"  {'N':>5} {'deltas/s':>9} {'p50 +ms':>8} {'p99':>6} {'CPU/Δ':>6} {'loop':>6} {'threads':>7} "
          f"{'RSS':>6} {'errors':>7}")
    for b, c in results:
        rss = c.rss_kb_per_stream / b.rss_kb_per_stream if b.rss_kb_per_stream > 0 else float("nan")
        print(f"  {b.n:>5} {c.rate / b.rate:>9.2f} {c.pct(0.5) - b.pct(0.5):>8.0f} "
              f"{c.pct(0.99) / b.pct(0.99):>6.2f} {c.cpu_us_per_delta / b.cpu_us_per_delta:>6.2f} "
              f"{c.loop_us_per_delta / b.cpu_us_per_delta:>6.2f} "
              f"{(c.cpu_us_per_delta - c.loop_us_per_delta) / b.cpu_us_per_delta:>7.2f} "
              f"{rss:>6.2f} {b.errors:>3}/{c.errors:<3}")
    if observed:
        print(f"\nmetrics and tracing on / off (target: CPU/Δ ≤ 1.05; {batches} span batches exported)")
        print(f"  {'N':>5} {'CPU/Δ':>6} {'loop':>6} {'deltas/s':>9} {'p99':>6} {'errors':>7}")
        for off, on in observed:
            print(f"  {off.n:>5} {on.cpu_us_per_delta / off.cpu_us_per_delta:>6.3f} "
                  f"{on.loop_us_per_delta / off.loop_us_per_delta:>6.3f} {on.rate / off.rate:>9.2f} "
                  f"{on.pct(0.99) / off.pct(0.99):>6.2f} {off.errors:>3}/{on.errors:<3}")
    if extra:
        print("\nthroughput per Colleague worker count at", levels[-1], "streams:",
              ", ".join(f"{w}: {level.rate:.0f} deltas/s (p99 {level.pct(0.99):.0f} ms, {level.errors} errors)"
                        for w, level in [(worker_counts[0], results[-1][1]), *extra]))


if __name__ == "__main__":
    main()
