"""Benchmark (not a test): readers on another instance than the one generating, on PostgreSQL.

Two `python -m backend serve` processes (A and B) on one fresh PostgreSQL database, the fake Messages API
in a third process. A turn is sent to A and read there (the local reader: its POST stream) and, at once,
on B (the remote reader: GET …/stream with `?turn_id=` and `Last-Event-ID: 0`). Prints:

1. lag: for each event, when B's reader got it minus when A's did (same clock, this process), p50/p99/max,
   over `--turns` turns of ~120 events (two words every 20 ms), one at a time, `--rounds` times;
2. load: `--readers` turns at once on A at `--pace` deltas a second, (a) read on A only, (b) each also read
   on B: the database's commits a second (pg_stat_database xact_commit deltas over `--window` s), the
   difference per remote reader, the lag under that load, and the connections the database saw;
3. idle: the same turns stalled (the model sends nothing): commits a second with and without B's readers.

    .venv/bin/python benchmarks/cross_instance.py [--admin-url URL] [--readers 100] [--turns 5] [--rounds 2]
        [--pace 5] [--window 10] [--per-turn 1] [--lag-only [--stagger 0]]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tests.live_server  # noqa: E402
from backend.auth.service import ensure_user  # noqa: E402
from backend.db.migrate import upgrade  # noqa: E402
from backend.db.session import Database  # noqa: E402
from tests.live_server import LiveServer  # noqa: E402
from tests.sse import parse_lines  # noqa: E402

# The fake Messages API, told what to answer on its stdin: "answer WORDS DELAY" or "stall SECONDS".
FAKE = """
import sys
from backend.demo.wire import Reply
from tests.fakes.anthropic_server import Script, start_fake_anthropic
fake, stop = start_fake_anthropic()
print(fake.url, flush=True)
for line in sys.stdin:
    kind, *args = line.split()
    if kind == "answer":
        words, delay = int(args[0]), float(args[1])
        fake.default = Script.answer(Reply.text(" ".join(f"w{i}" for i in range(words))), delay=delay)
    else:
        fake.default = Script.stall("Half an answer. ", after_deltas=1, hold=float(args[0]))
    fake.scripts.clear()
    print("ok", flush=True)
"""
CONTEXT = {"current_page": "tablizer"}
SETTLE = 11.0  # seconds between starting the turns and counting commits


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def ms(values: list[float]) -> str:
    return (f"p50 {pct(values, 0.5) * 1000:.1f} ms, p99 {pct(values, 0.99) * 1000:.1f} ms, "
            f"max {max(values) * 1000:.1f} ms (n={len(values)})") if values else "no events"


class Fake:
    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", FAKE], cwd=root, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()

    def tell(self, line: str) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline().strip() == "ok"


async def read(client: httpx.AsyncClient, method: str, path: str, times: dict[str, float], *,
               body: Any = None, headers: dict[str, str] | None = None, opened: asyncio.Future[Any] | None = None,
               params: dict[str, str] | None = None, kinds: dict[str, str] | None = None) -> None:
    async with client.stream(method, path, json=body, headers=headers, params=params,
                             timeout=httpx.Timeout(120.0)) as r:
        assert r.status_code == 200, await r.aread()
        lines: list[str] = []
        async for line in r.aiter_lines():
            lines.append(line)
            if line:
                continue
            for event in parse_lines(lines):
                times.setdefault(str(event.id), time.monotonic())
                if kinds is not None:
                    kinds[str(event.id)] = event.event or ""
                if event.event == "conversation" and opened is not None and not opened.done():
                    opened.set_result(event.data)
                if event.event in ("complete", "error"):
                    return
            lines = []


async def turn(a: httpx.AsyncClient, b: httpx.AsyncClient | None, ids: list[int] | None = None,
               caught_up: list[float] | None = None, copies: int = 1
               ) -> tuple[dict[str, float], dict[str, float], float, dict[str, str]]:
    """One turn sent to A and read there, and on B when `b` (by `copies` readers, the first one timed);
    (A's times, B's, when B's reader attached, each event's type). Its conversation's id goes into `ids`, and into
    `caught_up` when B's first reader had its first event (or at once without one)."""
    local: dict[str, float] = {}
    remote: dict[str, float] = {}
    kinds: dict[str, str] = {}
    opened: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    sender = asyncio.create_task(read(a, "POST", "/api/chat/stream", local, opened=opened,
                                      body={"message": "go", "context": CONTEXT}, kinds=kinds))
    data = await opened
    attached = time.monotonic()
    if ids is not None:
        ids.append(data["conversation_id"])
    if b is not None:
        first: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        reader = asyncio.create_task(read(b, "GET", f"/api/conversations/{data['conversation_id']}/stream",
                                          remote, headers={"Last-Event-ID": "0"}, opened=first,
                                          params={"turn_id": data["turn_id"]}))
        others = [asyncio.create_task(read(b, "GET", f"/api/conversations/{data['conversation_id']}/stream",
                                           {}, headers={"Last-Event-ID": "0"}, params={"turn_id": data["turn_id"]}))
                  for _ in range(copies - 1)]
        await asyncio.wait([first, reader], return_when=asyncio.FIRST_COMPLETED)
        if caught_up is not None:
            caught_up.append(time.monotonic())
        await reader
        await asyncio.gather(*others)
    elif caught_up is not None:
        caught_up.append(time.monotonic())
    await sender
    return local, remote, attached, kinds


Lag = tuple[float, str, float]  # B's reader's time minus A's for one event, its type, when A's reader got it


def lags(local: dict[str, float], remote: dict[str, float], attached: float, kinds: dict[str, str]) -> list[Lag]:
    """Events A's reader got after B's had caught up (its first answer replays what was before: not lag)."""
    caught_up = min(remote.values(), default=attached)
    return [(remote[i] - t, kinds.get(i, ""), t) for i, t in local.items() if i in remote and t > caught_up + 0.05]


def by_kind(found: list[Lag]) -> str:
    """The lags of every event, of the text deltas (the target is per delta) and of the others (mostly a
    turn's `usage` and `context_update`, at its end: here many turns end at once)."""
    text = [lag for lag, kind, _ in found if kind == "text_delta"]
    rest = [lag for lag, kind, _ in found if kind != "text_delta"]
    return f"{ms([lag for lag, _, _ in found])}; text_delta {ms(text)}; others {ms(rest)}"


def while_starting(found: list[Lag], done: list[tuple[dict[str, float], dict[str, float], float, dict[str, str]]]
                   ) -> str:
    """The text deltas' lag while the turns start (until the last of B's readers has its first event: a
    burst of begins and attaches on both instances) and after it, as the turns run."""
    begun = min(min(local.values()) for local, _, _, _ in done if local)
    started = max(min(remote.values()) for _, remote, _, _ in done if remote) + 0.05
    during = [lag for lag, kind, t in found if kind == "text_delta" and t <= started]
    after = [lag for lag, kind, t in found if kind == "text_delta" and t > started]
    return f"text_delta while the turns start ({started - begun:.1f} s) {ms(during)}; after {ms(after)}"


def attach_times(done: list[tuple[dict[str, float], dict[str, float], float, dict[str, str]]]) -> list[float]:
    """From B's request to its first event (the resume's own latency)."""
    return [min(remote.values()) - attached for _, remote, attached, _ in done if remote]


class Pg:
    def __init__(self, url: str) -> None:
        self.engine = sa.create_engine(url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)

    def commits(self) -> int:
        with self.engine.connect() as conn:
            return int(conn.execute(sa.text("SELECT xact_commit FROM pg_stat_database "
                                            "WHERE datname = current_database()")).scalar_one())

    def connections(self) -> tuple[int, int]:
        with self.engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT application_name FROM pg_stat_activity "
                                        "WHERE datname = current_database() AND pid <> pg_backend_pid()")).all()
        return len(rows), sum(r[0] == "colleague-listener" for r in rows)


async def commits_per_second(pg: Pg, window: float, seen: list[tuple[int, int]], caught_up: list[float],
                             n: int) -> float:
    while len(caught_up) < n:  # every turn begun and each remote reader attached
        await asyncio.sleep(0.1)
    # An idle backend reports its counts up to 10 s late (PostgreSQL 15's pgstat): what the readers cost as
    # they attached must be counted before the window, not in it.
    await asyncio.sleep(SETTLE)
    before, began = await asyncio.to_thread(pg.commits), time.monotonic()
    deadline = began + window
    while time.monotonic() < deadline:
        seen.append(await asyncio.to_thread(pg.connections))
        await asyncio.sleep(1.0)
    after, ended = await asyncio.to_thread(pg.commits), time.monotonic()
    return (after - before - 2 - len(seen)) / (ended - began)  # (less this benchmark's own queries)


async def under_load(a: httpx.AsyncClient, b: httpx.AsyncClient, pg: Pg, n: int, window: float,
                     remote: bool, copies: int = 1, stagger: float = 0.0
                     ) -> tuple[float, list[Lag], list[tuple[int, int]]]:
    seen: list[tuple[int, int]] = []
    caught_up: list[float] = []
    turns = []
    for _ in range(n):  # begun `stagger` seconds apart in all, so they end apart too
        turns.append(asyncio.create_task(turn(a, b if remote else None, None, caught_up, copies)))
        await asyncio.sleep(stagger / n)
    rate = await commits_per_second(pg, window, seen, caught_up, n)
    done = await asyncio.gather(*turns)
    found = [lag for turned in done for lag in lags(*turned)]
    if remote:
        print(f"  B's readers attached (request to first event): {ms(attach_times(done))}")
        print(f"  {while_starting(found, done)}")
    return rate, found, seen


async def measure(args: argparse.Namespace, fake: Fake, a_url: str, b_url: str, pg: Pg) -> None:
    limits = httpx.Limits(max_connections=4 * args.readers + 10)
    async with httpx.AsyncClient(base_url=a_url, limits=limits) as a, \
            httpx.AsyncClient(base_url=b_url, limits=limits) as b:
        r = await a.post("/api/auth/login", json={"username": "bench", "password": "bench-pw"})
        r.raise_for_status()
        b.cookies = a.cookies  # the same session on the other instance (it is in the database)
        fake.tell("answer 240 0.02")  # ~120 text deltas, 50 a second
        for round_ in range(args.rounds):
            found: list[Lag] = []
            for _ in range(args.turns):
                found += lags(*await turn(a, b))
            print(f"lag, one turn at a time, round {round_ + 1}: {by_kind(found)}")
        seconds = SETTLE + args.window + 10
        fake.tell(f"answer {int(2 * args.pace * seconds)} {1 / args.pace}")
        n, k = args.readers // args.per_turn, args.per_turn
        if args.lag_only:  # the remote readers' lag only: no commit rates to compare, no idle phase
            _, found, _ = await under_load(a, b, pg, n, args.window, remote=True, copies=k, stagger=args.stagger)
            print(f"lag beside {n} turns at {args.pace:g} deltas/s, each read on B by {k}: {by_kind(found)}")
            return
        alone, _, _ = await under_load(a, b, pg, n, args.window, remote=False)
        read_too, found, seen = await under_load(a, b, pg, n, args.window, remote=True, copies=k)
        print(f"{n} turns at {args.pace:g} deltas/s on A: {alone:.1f} commits/s read on A only, "
              f"{read_too:.1f} with each also read on B by {k}: {(read_too - alone) / (n * k):.2f} commits/s "
              f"per remote reader ({read_too - alone:.1f} for all {n * k})")
        print(f"lag beside them: {by_kind(found)}")
        print(f"connections to the database during the load: max {max(c for c, _ in seen)} "
              f"(of them listening: {max(listening for _, listening in seen)})")
        fake.tell(f"stall {SETTLE + args.window + 30}")
        idle_alone = await idle(a, b, pg, n, args.window, remote=False)
        idle_read = await idle(a, b, pg, n, args.window, remote=True, copies=k)
        print(f"idle ({n} turns waiting for the model): {idle_alone:.1f} commits/s read on A only, "
              f"{idle_read:.1f} with each also read on B by {k}: {(idle_read - idle_alone) / (n * k):.3f} "
              f"commits/s per idle remote reader ({idle_read - idle_alone:.1f} for all {n * k})")


async def idle(a: httpx.AsyncClient, b: httpx.AsyncClient, pg: Pg, n: int, window: float, remote: bool,
               copies: int = 1) -> float:
    """Commits a second while `n` turns wait for the model (which sends nothing), read on A, and on B
    when `remote`; then each is stopped."""
    ids: list[int] = []
    caught_up: list[float] = []
    turns = [asyncio.create_task(turn(a, b if remote else None, ids, caught_up, copies)) for _ in range(n)]
    rate = await commits_per_second(pg, window, [], caught_up, n)
    for conversation_id in ids:
        (await a.post(f"/api/conversations/{conversation_id}/stop")).raise_for_status()
    await asyncio.gather(*turns)
    return rate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--admin-url", default=os.environ.get("COLLEAGUE_TEST_PG",
                                                              "postgresql+psycopg://postgres@127.0.0.1:5432/test"))
    parser.add_argument("--readers", type=int, default=100)
    parser.add_argument("--per-turn", type=int, default=1,
                        help="remote readers of each turn under load: --readers / --per-turn turns")
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--pace", type=float, default=5, help="text deltas a second per turn under load")
    parser.add_argument("--window", type=float, default=10, help="seconds each commit rate is measured over")
    parser.add_argument("--stagger", type=float, default=0.0,
                        help="with --lag-only: seconds over which the turns under load begin (0: all at once)")
    parser.add_argument("--lag-only", action="store_true",
                        help="measure the lag beside the turns only (no read-on-A-only or idle phases)")
    args = parser.parse_args()
    root = Path(__file__).resolve().parent.parent
    name = f"colleague_bench_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(args.admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = sa.engine.make_url(args.admin_url).set(database=name).render_as_string(hide_password=False)
    tmp = Path(tempfile.mkdtemp())
    print(f"server logs in {tmp}")
    fake = Fake(root)
    servers: list[LiveServer] = []
    try:
        upgrade(url)
        db = Database(url)
        with db.session() as s:
            ensure_user(s, "bench", "bench-pw", "user")
        db.dispose()
        # A small pool each: the machine's PostgreSQL is shared (README "Several instances": the arithmetic).
        os.environ.update({"COLLEAGUE_DB_POOL_SIZE": "5", "COLLEAGUE_DB_MAX_OVERFLOW": "10",
                           "COLLEAGUE_MODEL_IDLE_TIMEOUT": "300"})
        tests.live_server.START_TIMEOUT = 240.0  # a cold start on a busy machine
        servers = [LiveServer(url, fake.url, tmp / f"{who}.log") for who in "AB"]
        for server in servers:
            server.start()
        print(f"PostgreSQL database {name}; A and B: python -m backend serve (1 worker each); "
              f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        asyncio.run(measure(args, fake, servers[0].url, servers[1].url, Pg(url)))
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(json.dumps({"settings": vars(args)}))
    finally:
        for server in servers:
            server.kill()
        fake.proc.kill()
        fake.proc.wait()
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


if __name__ == "__main__":
    main()
