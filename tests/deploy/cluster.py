"""Several instances behind nginx, as deployed (README "Deployment"), run as local processes: each instance is
`python -m backend serve` on its own port against one PostgreSQL; in front, Debian's nginx running
deploy/nginx.conf with only its `listen` port and its upstream's `server` lines rewritten to these processes.
A client that talks as the frontend does (an Idempotency-Key on each send; on `reconnect` or a cut stream, a
resume with Last-Event-ID and the turn's id) counts what a user would see go wrong.
Used by tests/deploy and benchmarks/multi_instance.py.
"""

from __future__ import annotations

import re
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import sqlalchemy as sa

from backend.demo.wire import Reply
from tests.fakes.anthropic_server import Script
from tests.live_server import ROOT, LiveServer, free_port
from tests.sse import Event, assembled, parse_lines

NGINX_CONF = ROOT / "deploy" / "nginx.conf"
UPSTREAM = re.compile(r"(upstream colleague \{\n)(.*?)(\n    \})", re.S)
SERVER_LINE = re.compile(r"^( *)server (\S+)( [^;]*)?;\n", re.M)
CONTEXT = {"current_page": "tablizer"}


def render_nginx_conf(listen_port: int, upstreams: list[str]) -> str:
    """deploy/nginx.conf with its listen port and upstream servers replaced (their parameters kept)."""
    text = NGINX_CONF.read_text()
    block = UPSTREAM.search(text)
    assert block, "deploy/nginx.conf has no `upstream colleague { … }` block"
    servers = list(SERVER_LINE.finditer(block.group(2)))
    assert servers, "the upstream block lists no server"
    indent, params = servers[0].group(1), servers[0].group(3) or ""
    body = block.group(2)
    body = body[:servers[0].start()] + "".join(f"{indent}server {u}{params};\n" for u in upstreams) + \
        SERVER_LINE.sub("", body[servers[0].end():])
    text = text[:block.start(2)] + body + text[block.end(2):]
    rendered, n = re.subn(r"\blisten 8080;", f"listen 127.0.0.1:{listen_port};", text)
    assert n == 1, "deploy/nginx.conf should listen on 8080 exactly once"
    return rendered


def nginx_executable() -> str | None:
    """Debian's nginx (`make nginx`), on PATH or where the package puts it."""
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if Path(p).exists()), None)


@dataclass
class Access:
    """One line of the proxy's access log (deploy/nginx.conf's `colleague` format)."""

    at: float  # $msec: when the request ended
    request: str
    status: int
    upstreams: list[str]  # every instance tried, in order
    upstream_statuses: list[str]
    seconds: float

    @property
    def served_by(self) -> str:
        return self.upstreams[-1] if self.upstreams else ""


ACCESS_LINE = re.compile(r'\] (?P<msec>[\d.]+) "(?P<request>[^"]*)" (?P<status>\d+) \d+ upstream=(?P<up>.*?) '
                         r'upstream_status=(?P<ups>.*?) rt=(?P<rt>[\d.]+)$')


class Proxy:
    """Debian's nginx on a free port, in the foreground (`daemon off`), its access log in `access_path`."""

    def __init__(self, workdir: Path, upstreams: list[str]) -> None:
        self.workdir, self.upstreams = workdir, upstreams
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.access_path = workdir / "nginx-access.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        executable = nginx_executable() or "nginx"
        conf = self.workdir / "nginx.conf"
        conf.write_text(render_nginx_conf(self.port, self.upstreams))
        with open(self.access_path, "ab") as log:  # `access_log /dev/stdout`: this file
            self.proc = subprocess.Popen(
                [executable, "-c", str(conf), "-p", str(self.workdir), "-e", str(self.workdir / "nginx-error.log"),
                 "-g", f"daemon off; pid {self.workdir / 'nginx.pid'};"], stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"nginx exited: {self.error_log()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"nginx did not listen within 10 s: {self.error_log()}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def reload(self) -> None:
        """`nginx -s reload`: new workers with the upstream's failure counts cleared (the old ones finish the
        requests they hold). Passive recovery alone readmits an instance only once a request sent to it has
        completed, and the first ones are answer streams that take seconds."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGHUP)
        time.sleep(0.5)  # the master starts the new workers, then retires the old ones

    def error_log(self) -> str:
        path = self.workdir / "nginx-error.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def access(self) -> list[Access]:
        lines = []
        for line in self.access_path.read_text(errors="replace").splitlines():
            m = ACCESS_LINE.search(line)
            if m:
                lines.append(Access(float(m["msec"]), m["request"], int(m["status"]),
                                    re.split(r", | : ", m["up"]), re.split(r", | : ", m["ups"]), float(m["rt"])))
        return lines


class Instance(LiveServer):
    """One instance of the cluster: its port stays across restarts (nginx knows it by address), and its
    connections are named in pg_stat_activity (`application_name`), as compose.yaml names them."""

    health_path = "/api/health/ready"
    start_timeout = 120.0  # two at once, on a shared 2-core machine

    def __init__(self, database_url: str, model_url: str, workdir: Path, name: str, *extra_args: str) -> None:
        url = sa.engine.make_url(database_url).update_query_dict({"application_name": f"colleague-{name}"})
        super().__init__(url.render_as_string(hide_password=False), model_url, workdir / f"{name}.log", *extra_args)
        self.name = name
        self.address = f"127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


def rolling_restart(instances: list[Instance], proxy: Proxy,
                    on_restart: Callable[[Instance], None] | None = None) -> list[dict[str, float]]:
    """README's procedure: one instance at a time, SIGTERM (it turns unready, refuses new requests, closes
    its listener, tells its streams to resume elsewhere, saves their turns and exits), start it again, wait
    until it reports ready, reload nginx (which counts it live again at once), then the next."""
    took = []
    for inst in instances:
        if on_restart:
            on_restart(inst)
        stopped = inst.terminate(timeout=30)
        started = inst.start()
        proxy.reload()
        took.append({"exit_s": stopped, "start_s": started})
    return took


def db_connections(admin_url: str, database: str) -> dict[str, int]:
    """Open connections to `database` by application_name (each instance's)."""
    engine = sa.create_engine(admin_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT application_name, count(*) FROM pg_stat_activity "
                                        "WHERE datname = :db GROUP BY application_name"), {"db": database})
            return {str(name): int(n) for name, n in rows}
    finally:
        engine.dispose()


# ---- the model behind, and a client in front ---------------------------------------------------------

def paced_answer(words: int, pace: float) -> Callable[[dict[str, Any]], Script]:
    """The fake model's answer: `words` words, a delta (3 words) every `pace` s; a request that ends in
    the answer so far (a prefill: the turn goes on on another instance) gets the rest of it, quickly."""
    whole = " ".join(f"w{i}" for i in range(words))

    def pick(body: dict[str, Any]) -> Script:
        last = body["messages"][-1]
        if last["role"] == "assistant":
            content = last["content"]
            prefill = content if isinstance(content, str) else content[-1]["text"]
            assert whole.startswith(prefill), prefill[-40:]
            return Script.answer(Reply.text(whole[len(prefill):]), delay=0.002)
        return Script.answer(Reply.text(whole), delay=pace)
    return pick


@dataclass
class Outcome:
    """One send as its client lived it: every event kept once (by id), and what went wrong."""

    events: list[Event] = field(default_factory=list)
    conversation_id: int | None = None
    turn_id: str | None = None
    statuses: list[int] = field(default_factory=list)  # every HTTP response, sends and resumes
    errors: list[str] = field(default_factory=list)  # what a user would see: an error status, an `error`
    reconnects: int = 0  # `reconnect` events (a draining instance asking the client to resume)
    cut: int = 0  # streams that ended or broke without a terminal event (resumed, as the frontend does)
    started: float = 0.0
    ended: float = 0.0
    last_at: float = 0.0  # when the last event came (monotonic)
    longest_gap: float = 0.0  # the longest wait between two events of the answer, resumes included
    resume_gaps: list[float] = field(default_factory=list)  # for each resume: last event before → first after
    resume_waits: list[float] = field(default_factory=list)  # for each resume: its request → its first event
    resuming: float = 0.0  # when a resume was sent (0: none under way): its first event ends a gap

    @property
    def last_id(self) -> int:
        return max((int(e.id) for e in self.events if e.id), default=0)

    @property
    def terminal(self) -> Event | None:
        return self.events[-1] if self.events and self.events[-1].event in ("complete", "error") else None

    @property
    def ids(self) -> list[int]:
        return [int(e.id) for e in self.events if e.id]

    @property
    def text(self) -> str:
        return assembled("", self.events)  # (after a dead worker's `resync`: each word once)


def talk(client: httpx.Client, message: str, conversation_id: int | None = None, *,
         stop_after: Callable[[Outcome], bool] | None = None) -> Outcome:
    """Send `message` and follow the answer to its terminal event, resuming as the frontend does.
    `stop_after(outcome)` true ends the reading early (the client leaves; the answer goes on)."""
    body: dict[str, Any] = {"message": message, "context": CONTEXT}
    if conversation_id is not None:
        body["conversation_id"] = conversation_id
    return follow(client, Outcome(started=time.monotonic()), send=body, stop_after=stop_after)


def follow(client: httpx.Client, out: Outcome, *, send: dict[str, Any] | None = None, attempts: int = 30,
           stop_after: Callable[[Outcome], bool] | None = None) -> Outcome:
    """Go on reading `out`'s answer (the same client, maybe through another door): the send again while its
    turn is unknown, else a resume after the last event held."""
    key = uuid.uuid4().hex
    for _ in range(attempts):
        if out.conversation_id is None:  # nothing known yet: the same send again attaches to its turn
            request = client.build_request("POST", "/api/chat/stream", json=send, headers={"Idempotency-Key": key})
        else:
            out.resuming = time.monotonic()
            request = client.build_request("GET", f"/api/conversations/{out.conversation_id}/stream",
                                           params={"turn_id": out.turn_id} if out.turn_id else None,
                                           headers={"Last-Event-ID": str(out.last_id)})
        wait, streaming = 0.2, False
        try:
            with closing(client.send(request, stream=True)) as r:
                out.statuses.append(r.status_code)
                if r.status_code != 200:
                    r.read()
                    out.errors.append(f"{request.method} {request.url.path}: {r.status_code} {r.text[:200]}")
                    wait = 0.5
                else:
                    streaming = True
                    wait = read_events(r, out, stop_after)
        except httpx.TransportError as exc:
            if streaming:  # a stream broken mid-body: the frontend shows "Reconnecting…" and resumes, as here
                out.cut += 1
            else:
                out.errors.append(f"{request.method} {request.url.path}: {type(exc).__name__} {exc}")
        if out.terminal is not None or (stop_after and stop_after(out)):
            break
        time.sleep(wait)
    else:
        out.errors.append(f"no terminal event after {attempts} attempts")
    if out.terminal is not None and out.terminal.event == "error":
        out.errors.append(f"error event: {out.terminal.data}")
    out.ended = time.monotonic()
    return out


def read_events(r: httpx.Response, out: Outcome, stop_after: Callable[[Outcome], bool] | None) -> float:
    """One response's events into `out`; returns how long to wait before resuming (when it must)."""
    for event in parse_lines(r.iter_lines()):
        if event.event == "reconnect":
            out.reconnects += 1
            return float(event.data["retry_ms"]) / 1000
        if event.id and int(event.id) <= out.last_id:
            out.errors.append(f"event {event.id} again after {out.last_id}")
            continue
        now = time.monotonic()
        if out.last_at:
            out.longest_gap = max(out.longest_gap, now - out.last_at)
            if out.resuming:
                out.resume_gaps.append(now - out.last_at)
                out.resume_waits.append(now - out.resuming)
        out.resuming = 0.0
        out.events.append(event)
        out.last_at = now
        if event.event == "conversation":
            out.conversation_id = event.data["conversation_id"]
            out.turn_id = event.data["turn_id"]
        if out.terminal or (stop_after and stop_after(out)):
            return 0.0
    out.cut += 1
    return 0.2
