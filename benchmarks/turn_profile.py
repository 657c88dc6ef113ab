"""Benchmark (not a test): what one turn costs the database, and what each open stream holds in memory.

Colleague runs in this process (uvicorn in a thread, the app as `python -m backend serve` builds it), the
stub Messages API of `relay_vs_colleague.py` in another, and the load (N streams, each read to its end) in a
third, so that what this process allocates is the server's. Printed:

- SQL statements and commits per turn, by kind: `begin` (the send's transaction, with the session check
  and the stream cap it runs), `checkpoint` (the progress writer's batched writes: per turn, and per write),
  `final` (the final save), `watcher` (lease renewal and Stop polling, for all of a worker's turns), and
  how many of each kind are SELECTs. Counted with SQLAlchemy's `before_cursor_execute` and `commit` events,
  each attributed to the persistence point on the calling thread's stack. These counts do not depend on load.
- with `--memory`: a tracemalloc snapshot with N streams open (mid-answer) against one with none, the
  difference per stream grouped by the innermost frame in `backend/` (else the allocating line), and the
  live objects per stream by type (gc); then the same after the streams ended (what a finished turn leaves).
  The heap by site: each allocation under the innermost frame in `backend/` and the line that allocated.

    .venv/bin/python benchmarks/turn_profile.py [--db sqlite|postgres] [--streams 20] [--memory]
    .venv/bin/python benchmarks/turn_profile.py --relay [--streams 30]   # the bare relay's heap, the same way
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import gc
import io
import os
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.relay_vs_colleague import DELTA_TEXT, DELTAS, Server, free_port, make_database, one_stream  # noqa: E402

CHAT = "/api/chat/stream"

# (file suffix, function) on the stack → the persistence point a statement belongs to; the first match from
# the innermost frame outwards wins, so the session check inside `begin` counts as `auth`.
POINTS = (("backend/auth/service.py", None, "auth"), ("backend/chat/runner.py", "_save", "final"),
          ("backend/chat/progress.py", "_write_together", "checkpoint"), ("backend/chat/begin.py", "begin", "begin"),
          ("backend/chat/supervisor.py", "check", "watcher"))


def point() -> str:
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        for suffix, name, kind in POINTS:
            if code.co_filename.endswith(suffix) and (name is None or code.co_name == name):
                return kind
        frame = frame.f_back  # type: ignore[assignment]
    return "other"


class Counts:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.statements: collections.Counter[str] = collections.Counter()
        self.selects: collections.Counter[str] = collections.Counter()
        self.commits: collections.Counter[str] = collections.Counter()
        self.rows: collections.Counter[str] = collections.Counter()  # parameter sets (executemany rows)
        self.texts: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)

    def install(self) -> None:
        from sqlalchemy import event
        from sqlalchemy.engine import Engine

        def executed(_conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any,
                     executemany: bool) -> None:
            kind = point()
            head = statement.lstrip()[:60].split("\n")[0]
            with self.lock:
                self.statements[kind] += 1
                self.selects[kind] += statement.lstrip()[:6].upper() == "SELECT"
                self.rows[kind] += len(parameters) if executemany else 1
                self.texts[kind][head] += 1

        def committed(_conn: Any) -> None:
            with self.lock:
                self.commits[point()] += 1

        event.listen(Engine, "before_cursor_execute", executed)
        event.listen(Engine, "commit", committed)

    def reset(self) -> None:
        with self.lock:
            for c in (self.statements, self.selects, self.commits, self.rows):
                c.clear()
            self.texts.clear()


def serve(app: Any, port: int) -> tuple[Any, threading.Thread]:
    import uvicorn
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, name="server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the server did not start")
        time.sleep(0.1)
    return server, thread


def load(port: int, cookie: str, n: int, ramp: float, path: str = CHAT) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, __file__, "--load", str(port), "--cookie", cookie, "--streams", str(n),
                             "--ramp", str(ramp), "--path", path], cwd=ROOT)


def run_load(port: int, cookie: str, n: int, ramp: float, path: str) -> None:
    body: dict[str, object] = {"context": {"current_page": "tablizer"}} if path == CHAT else {}
    server = Server("colleague" if path == CHAT else "bare relay", [], {}, port, path, body, Path(os.devnull), cookie)

    async def go() -> None:
        async def later(i: int) -> Any:
            await asyncio.sleep(i * ramp / n)
            return await one_stream(server, f"question {i}")
        results = await asyncio.gather(*(later(i) for i in range(n)))
        errors = [r.error for r in results if r.error]
        print(f"load: {n} streams, {len(errors)} errors{': ' + errors[0] if errors else ''}", flush=True)
    asyncio.run(go())


def snapshot() -> tracemalloc.Snapshot:
    """The traced heap, without the snapshots' own tuples (taken while tracing is on)."""
    return tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])


def short(frame: Any) -> str:
    """A frame as `backend`-relative, package-relative or stdlib-relative `path:line`."""
    path = frame.filename.split("/backend/", 1)[-1].split("site-packages/")[-1]
    return f"{path.split('python3.11/')[-1]}:{frame.lineno}"


def by_origin(diff: list[Any], n: int, top: int = 18) -> None:
    """Each allocation under the innermost frame in backend/ (else its own line), KB per stream."""
    grouped: collections.Counter[str] = collections.Counter()
    counts: collections.Counter[str] = collections.Counter()
    for stat in diff:
        frames = stat.traceback
        mine = next((f for f in reversed(frames) if "/backend/" in f.filename), frames[-1])  # (oldest first)
        key = f"{mine.filename.split('/lean')[-1].split('site-packages/')[-1]}:{mine.lineno}"
        grouped[key] += stat.size_diff
        counts[key] += stat.count_diff
    total = sum(s.size_diff for s in diff)
    lines: collections.Counter[str] = collections.Counter()
    for stat in diff:
        f = stat.traceback[-1]
        lines[f"{f.filename.split('/lean')[-1].split('site-packages/')[-1]}:{f.lineno}"] += stat.size_diff
    sites: collections.Counter[str] = collections.Counter()
    for stat in diff:  # where in our code, and which line below it allocated
        frames = stat.traceback
        mine = next((f for f in reversed(frames) if "/backend/" in f.filename), None)
        sites[f"{short(mine) if mine else '-'} → {short(frames[-1])}"] += stat.size_diff
    print(f"  tracemalloc: {total / n / 1024:.1f} KB per stream (Python heap), by origin:")
    for key, size in grouped.most_common(top):
        print(f"    {size / n / 1024:8.2f} KB {counts[key] / n:8.1f} blocks  {key}")
    print("  by allocating line:")
    for key, size in lines.most_common(top):
        print(f"    {size / n / 1024:8.2f} KB  {key}")
    print("  by site (innermost frame of ours → allocating line):")
    for key, size in sites.most_common(top):
        print(f"    {size / n / 1024:8.2f} KB  {key}")


def deep_size(obj: Any, seen: set[int]) -> int:
    """Bytes of `obj` and of what it alone reaches (containers, strings; not types, modules, functions)."""
    import types
    size, todo = 0, [obj]
    while todo:
        o = todo.pop()
        if id(o) in seen or isinstance(o, type | types.ModuleType | types.FunctionType):
            continue
        seen.add(id(o))
        size += sys.getsizeof(o)
        todo.extend(gc.get_referents(o))
    return size


def held(runners: list[Any]) -> None:
    """What each running turn holds, by part (each object counted once, in the first part that reaches it)."""
    parts = {"event log (frames in memory)": lambda r: r.log.frames,
             "history (turn.messages)": lambda r: r.turn.messages,
             "page context": lambda r: r.turn.tool_ctx.page_context,
             "turn state (this turn's messages, text)": lambda r: r.state,
             "visible text": lambda r: r.visible}
    shared: set[int] = set()
    sizes = collections.Counter[str]()
    for r in runners:
        seen = set(shared)
        for name, part in parts.items():
            sizes[name] += deep_size(part(r), seen)
    n = max(1, len(runners))
    print("  held per running turn: " + ", ".join(f"{name} {size / n / 1024:.1f} KB" for name, size in sizes.items()))


def live_types() -> collections.Counter[str]:
    gc.collect()
    return collections.Counter(type(o).__name__ for o in gc.get_objects())


def relay_memory(args: argparse.Namespace) -> None:
    """`--relay`: the bare relay (`bare_relay.py`) in this process under the same load, for the same
    tracemalloc view: what the floor holds per open stream, site by site."""
    from benchmarks.bare_relay import make_app

    stub_port = free_port()
    stub = subprocess.Popen([sys.executable, str(ROOT / "benchmarks/relay_vs_colleague.py"), "--stub",
                             str(stub_port), "--rate", str(args.rate)], cwd=ROOT)
    port = free_port()
    time.sleep(1)
    server, thread = serve(make_app(f"http://127.0.0.1:{stub_port}"), port)
    try:
        tracemalloc.start(args.frames)
        load(port, "", 3, 0.1, "/relay").wait()
        time.sleep(1.5)
        n = args.streams
        before, types0 = snapshot(), live_types()
        proc = load(port, "", n, args.ramp, "/relay")
        time.sleep(args.ramp + 0.3 + DELTAS / args.rate / 2)  # every stream open, half-way on average
        types1, during = live_types(), snapshot()
        proc.wait()
        tracemalloc.stop()
        print(f"\nbare relay, {n} streams open against none:")
        by_origin(during.compare_to(before, "traceback"), n)
        print("  live objects per stream by type: "
              + ", ".join(f"{t} {c / n:.1f}" for t, c in (types1 - types0).most_common(14)))
    finally:
        server.should_exit = True
        thread.join(30)
        stub.terminate()
        stub.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--streams", type=int, default=20)
    parser.add_argument("--ramp", type=float, default=1.0)
    parser.add_argument("--rate", type=float, default=10.0)
    parser.add_argument("--memory", action="store_true", help="tracemalloc and gc counts with the streams open")
    parser.add_argument("--frames", type=int, default=6, help="tracemalloc traceback depth")
    parser.add_argument("--load", type=int, help=argparse.SUPPRESS)  # internal: the load, against this port
    parser.add_argument("--cookie", default="", help=argparse.SUPPRESS)
    parser.add_argument("--path", default=CHAT, help=argparse.SUPPRESS)
    parser.add_argument("--relay", action="store_true", help="the bare relay's memory instead (tracemalloc)")
    args = parser.parse_args()
    if args.load:
        run_load(args.load, args.cookie, args.streams, args.ramp, args.path)
        return
    if args.relay:
        relay_memory(args)
        return

    tmp = Path(tempfile.mkdtemp(prefix="turn-profile-"))
    db_url, drop = make_database(args.db, tmp)
    stub_port = free_port()
    stub = subprocess.Popen([sys.executable, str(ROOT / "benchmarks/relay_vs_colleague.py"), "--stub",
                             str(stub_port), "--rate", str(args.rate)], cwd=ROOT)
    counts = Counts()
    counts.install()
    from backend.config import Settings
    from backend.main import create_app
    settings = Settings(DATABASE_URL=db_url, ANTHROPIC_API_KEY="bench",
                        ANTHROPIC_BASE_URL=f"http://127.0.0.1:{stub_port}",
                        COLLEAGUE_DEMO=False, COLLEAGUE_SOURCES="offline", COLLEAGUE_MAX_CONCURRENT_STREAMS=0,
                        COLLEAGUE_TURNS_PER_MINUTE=0, COLLEAGUE_DAILY_TOKEN_BUDGET=0)  # type: ignore[call-arg]
    port = free_port()
    app = create_app(settings)
    server, thread = serve(app, port)
    try:
        r = httpx.post(f"http://127.0.0.1:{port}/api/auth/login", json={"username": "bench", "password": "bench-pw"})
        r.raise_for_status()
        cookie = "; ".join(f"{k}={v}" for k, v in r.cookies.items())
        if args.memory:
            tracemalloc.start(args.frames)
        load(port, cookie, 3, 0.1).wait()  # warm-up: imports, caches, pools
        time.sleep(1.5)
        counts.reset()
        n = args.streams
        if args.memory:
            before, types0 = snapshot(), live_types()
        proc = load(port, cookie, n, args.ramp)
        if args.memory:
            deadline, half, peak = time.monotonic() + 300, DELTA_TEXT * (DELTAS // 2), 0
            while time.monotonic() < deadline:  # the streams open, on average half-way through their answers
                runners = list(app.state.chat.supervisor.runners.values())
                if len(runners) >= 0.6 * n and sum(len(r.visible) for r in runners) > len(runners) * len(half):
                    break
                if peak >= 0.6 * n and len(runners) < peak:  # (a loaded machine: as many as were open at once)
                    break
                peak = max(peak, len(runners))
                time.sleep(0.1)
            open_n = max(1, len(runners))  # (per stream open then)
            logged = sum(r.log.next_id - 1 for r in runners) / max(1, len(runners))
            kept = sum(len(r.log.frames) for r in runners) / max(1, len(runners))
            types1 = live_types()
            during = snapshot()
            with contextlib.redirect_stdout(io.StringIO()) as holding:
                held(runners)
            shown = len(runners)
            del runners  # this list would keep the turns' runners alive after they end
        proc.wait()
        time.sleep(1.5)  # the last final saves
        if args.memory:
            types2 = live_types()
            after = snapshot()
            tracemalloc.stop()
        print(f"\ndatabase: {args.db}, {n} turns of {DELTAS} deltas at {args.rate:g}/s (checkpoints every 0.5 s)")
        print(f"  {'kind':<11} {'statements':>10} {'/turn':>7} {'SELECTs/turn':>12} {'rows/turn':>9} "
              f"{'commits':>8} {'/turn':>6} {'statements/commit':>17}")
        for kind in ("auth", "begin", "checkpoint", "final", "watcher", "other"):
            st, c = counts.statements[kind], counts.commits[kind]
            if st or c:
                print(f"  {kind:<11} {st:>10} {st / n:>7.2f} {counts.selects[kind] / n:>12.2f} "
                      f"{counts.rows[kind] / n:>9.1f} {c:>8} {c / n:>6.2f} {st / c if c else float('nan'):>17.2f}")
        for kind in ("begin", "checkpoint", "final", "other"):
            print(f"  {kind}: " + "; ".join(f"{k} ×{v / n:.2f}" for k, v in counts.texts[kind].most_common()))
        if args.memory:
            print(f"\nwith {shown} streams open against none (each had logged {logged:.0f} frames and held "
                  f"{kept:.0f} of them in memory):")
            by_origin(during.compare_to(before, "traceback"), open_n)
            print(holding.getvalue(), end="")
            grown = types1 - types0
            print("  live objects per stream by type: " + ", ".join(
                f"{t} {c / open_n:.1f}" for t, c in grown.most_common(14)))
            print(f"\nafter the {n} turns ended, against before them:")
            by_origin(after.compare_to(before, "traceback"), n, top=8)
            left = types2 - types0
            print("  live objects left per turn by type: " + ", ".join(
                f"{t} {c / n:.2f}" for t, c in left.most_common(10)))
    finally:
        server.should_exit = True
        thread.join(30)
        stub.terminate()
        stub.wait()
        drop()  # type: ignore[operator]


if __name__ == "__main__":
    main()
