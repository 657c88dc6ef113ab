"""Benchmark (not a test): a rolling restart of two instances behind nginx under N concurrent chat streams.

The cluster of tests/deploy (two `python -m backend serve` on one PostgreSQL, Debian's nginx running
deploy/nginx.conf in front) with the fake Messages API in a process of its own (answers of `--words` words,
three every `--pace` s; a continuation after a restart gets the rest at once). N clients, each a thread that
sends through the proxy, reads its answer to the end as the frontend does (a `reconnect` or a cut stream
is resumed with Last-Event-ID), and sends again, until both instances were restarted one after the other
(README "Rolling restart"). Prints the client errors (any error status, `error` event, duplicate or missing
event, or an answer that differs from the stored one), the resumes, how long each instance took to exit and
to be ready, requests nginx sent to an instance while it drained, and each instance's PostgreSQL
connections (pg_stat_activity by application_name) at rest and at most during the run.

    .venv/bin/python benchmarks/multi_instance.py [--streams 100] [--words 150] [--pace 0.05]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.db.models import Message  # noqa: E402
from backend.db.session import Database  # noqa: E402
from tests.conftest import PG_ADMIN_URL, add_user, create_pg_database  # noqa: E402
from tests.deploy.cluster import Instance, Outcome, Proxy, db_connections, rolling_restart, talk  # noqa: E402
from tests.live_server import ROOT, login  # noqa: E402

FAKE = """
import sys
from tests.deploy.cluster import paced_answer
from tests.fakes.anthropic_server import start_fake_anthropic
fake, stop = start_fake_anthropic()
fake.default = paced_answer(int(sys.argv[1]), float(sys.argv[2]))
print(fake.url, flush=True)
sys.stdin.read()
"""


def exact(out: Outcome, stored: str) -> bool:
    terminal = out.terminal
    return (terminal is not None and terminal.event == "complete" and out.ids == list(range(1, len(out.ids) + 1))
            and out.text == terminal.data["payload"]["message"] == stored)


def gaps(seconds: list[float]) -> str:
    if not seconds:
        return "none"
    ordered = sorted(seconds)
    p50, p99 = (ordered[min(len(ordered) - 1, int(q * len(ordered)))] for q in (0.5, 0.99))
    return f"p50 {p50:.2f} s, p99 {p99:.2f} s, max {ordered[-1]:.2f} s (n={len(ordered)})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--words", type=int, default=150)
    parser.add_argument("--pace", type=float, default=0.05)
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    url, drop = create_pg_database()
    database = sa.engine.make_url(url).database or ""
    work = Path(tempfile.mkdtemp(prefix="multi-instance-"))
    fake = subprocess.Popen([sys.executable, "-c", FAKE, str(args.words), str(args.pace)], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert fake.stdout is not None
    model_url = fake.stdout.readline().strip()
    a, b = Instance(url, model_url, work, "a"), Instance(url, model_url, work, "b")
    proxy = Proxy(work, [a.address, b.address])
    db = Database(url)
    clients: list[httpx.Client] = []
    try:
        a.launch()
        b.launch()
        a.wait_ready()
        b.wait_ready()
        proxy.start()
        add_user(db, "alice")
        first = login(proxy.url, "alice")
        clients = [first] + [httpx.Client(base_url=proxy.url, cookies=first.cookies, timeout=60)
                             for _ in range(args.streams - 1)]
        at_rest = db_connections(PG_ADMIN_URL, database)
        peak: dict[str, int] = {}
        done, outcomes = threading.Event(), []

        def keep_talking(client: httpx.Client, i: int) -> None:
            n = 0
            while not done.is_set():
                outcomes.append(talk(client, f"client {i} question {n}"))
                n += 1

        def sample() -> None:
            while not done.is_set():
                for name, n in db_connections(PG_ADMIN_URL, database).items():
                    peak[name] = max(peak.get(name, 0), n)
                time.sleep(0.5)

        threads = [threading.Thread(target=keep_talking, args=(c, i), daemon=True) for i, c in enumerate(clients)]
        threads.append(threading.Thread(target=sample, daemon=True))
        began = time.monotonic()
        for t in threads:
            t.start()
        while len(outcomes) < args.streams and time.monotonic() - began < 120:
            time.sleep(0.2)
        under_way = time.monotonic()
        drains: dict[str, float] = {}
        took = rolling_restart([a, b], proxy, on_restart=lambda inst: drains.update({inst.address: time.time()}))
        restarted = time.monotonic()
        load = os.getloadavg()
        done.set()
        for t in threads:
            t.join(120)
        stored = {}
        with db.session() as s:
            for m in s.query(Message).filter_by(role="assistant"):
                stored[m.conversation_id] = m.content
        errors = [e for o in outcomes for e in o.errors]
        wrong = [o for o in outcomes if not o.errors and not exact(o, stored.get(o.conversation_id or 0, ""))]
        log = proxy.access()
        to_draining = sum(1 for addr, t0 in drains.items() for e in log
                          if t0 + 0.3 < e.at - e.seconds < t0 + took[list(drains).index(addr)]["exit_s"]
                          and e.served_by == addr)
        print(f"{args.streams} streams through nginx, answers of {args.words} words at 3 per {args.pace} s; "
              f"rolling restart of 2 instances took {restarted - under_way:.1f} s")
        print(f"  answers: {len(outcomes)} ({sum(o.reconnects > 0 or o.cut > 0 for o in outcomes)} resumed on "
              f"the other instance: {sum(o.reconnects for o in outcomes)} after `reconnect`, "
              f"{sum(o.cut for o in outcomes)} after a cut stream)")
        interrupted = [o for o in outcomes if o.terminal is not None and o.terminal.event == "error"]
        statuses = [s for o in outcomes for s in o.statuses if s != 200]
        print(f"  client errors: {len(errors)}: {len(statuses)} error statuses {sorted(set(statuses))}, "
              f"{sum('Error' in e for e in errors)} transport errors, {len(interrupted)} answers ended "
              f"`error` ({sorted({o.terminal.data['code'] for o in interrupted if o.terminal})}), "
              f"{sum('again after' in e for e in errors)} events sent twice")
        resumed = [o.longest_gap for o in outcomes if o.reconnects or o.cut]
        others = [o.longest_gap for o in outcomes if not (o.reconnects or o.cut)]
        print(f"  client-visible gaps: each resume, last event before to first after: "
              f"{gaps([g for o in outcomes for g in o.resume_gaps])}; of which from the resume's request: "
              f"{gaps([g for o in outcomes for g in o.resume_waits])}")
        print(f"  longest wait between two events of an answer (its first text included), resumed: "
              f"{gaps(resumed)}; not resumed: {gaps(others)}")
        print(f"  answers not exact (ids 1..n, text = payload = stored): {len(wrong)}   "
              f"requests nginx sent to a draining instance: {to_draining}")
        for o in wrong[:3]:
            print(f"    not exact: conversation {o.conversation_id}, ids {o.ids[:3]}…{o.ids[-3:]}, "
                  f"{len(o.text)} characters read, {len(stored.get(o.conversation_id or 0, ''))} stored, "
                  f"terminal {o.terminal.event if o.terminal else None}")
        for inst, times in zip((a, b), took, strict=True):
            print(f"  instance {inst.name}: exit {times['exit_s']:.1f} s after SIGTERM, ready "
                  f"{times['start_s']:.1f} s after start")
        print("  PostgreSQL connections by instance, at rest / at most during the run: " + ", ".join(
            f"{name or '(admin)'} {at_rest.get(name, 0)} / {peak.get(name, 0)}"
            for name in sorted(set(at_rest) | set(peak))))
        print(f"  load average at the end of the restart: {' '.join(f'{x:.2f}' for x in load)}")
        for e in sorted({e[:160] for e in errors if not e.startswith("error event")})[:10]:
            print("   ", e)
    finally:
        for client in clients:
            client.close()
        proxy.stop()
        a.kill()
        b.kill()
        db.dispose()
        fake.kill()
        fake.wait()
        drop()


if __name__ == "__main__":
    main()
