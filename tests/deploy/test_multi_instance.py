"""Two instances on one PostgreSQL behind nginx (deploy/nginx.conf), the fake Messages API behind them
(issue 28, "A multi-instance harness"): a resume on the other instance is exact; `kill -9` of the
generating one leaves no conversation stuck; Stop crosses instances; the proxy sends nothing new to a
draining instance; a rolling restart under concurrent streams costs the clients nothing.

Marked `faults` (subprocess servers and nginx, ~1.5 minutes). PostgreSQL only: SQLite is single-host.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from backend.db.migrate import upgrade
from backend.db.models import ChatTurn, Conversation, Message, TurnEvent
from backend.db.session import Database
from tests.conftest import add_user, create_pg_database
from tests.deploy.cluster import Instance, Outcome, Proxy, follow, nginx_executable, paced_answer, rolling_restart, talk
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.live_server import login, wait_for

pytestmark = [pytest.mark.faults, pytest.mark.postgres]


class Cluster:
    def __init__(self, db_url: str, a: Instance, b: Instance, proxy: Proxy) -> None:
        self.db_url, self.a, self.b, self.proxy = db_url, a, b, proxy
        self.db = Database(db_url)
        self.clients: list[httpx.Client] = []

    def client(self, base_url: str) -> httpx.Client:
        self.clients.append(login(base_url, "alice"))
        return self.clients[-1]

    def answer(self, conversation_id: int | None) -> Message:
        with self.db.session() as s:
            answer = s.query(Message).filter_by(conversation_id=conversation_id, role="assistant") \
                .order_by(Message.id.desc()).first()
            assert answer is not None
            return answer

    def close(self) -> None:
        for client in self.clients:
            client.close()
        self.proxy.stop()
        for inst in (self.a, self.b):
            inst.kill()
        self.db.dispose()


@pytest.fixture(scope="module")
def cluster(fake_server: FakeAnthropic, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    if not nginx_executable():
        if os.environ.get("CI"):
            pytest.fail("nginx is missing in CI (`make nginx` installs it)")
        pytest.skip("nginx is not installed (`make nginx`)")
    url, drop = create_pg_database()
    work = tmp_path_factory.mktemp("cluster")
    a, b = Instance(url, fake_server.url, work, "a"), Instance(url, fake_server.url, work, "b")
    proxy = Proxy(work, [a.address, b.address])
    cluster = Cluster(url, a, b, proxy)
    try:
        upgrade(url)  # here, where the code is imported already (both at once: tests/db/test_migrate_together.py)
        a.launch()
        b.launch()
        a.wait_ready()
        b.wait_ready()
        proxy.start()
        add_user(cluster.db, "alice")
        yield cluster
    finally:
        cluster.close()
        drop()


@pytest.fixture
def live(cluster: Cluster, fake_llm: FakeAnthropic) -> Cluster:
    """The cluster with both instances up (a test that stopped one started it again, or left it to this)."""
    for inst in (cluster.a, cluster.b):
        if not inst.running:
            inst.start()
    return cluster


def assert_exact(out: Outcome) -> None:
    """Every event once, in order, numbered 1, 2, 3… without a gap, ending `complete`; the text the client
    assembled is the answer."""
    assert not out.errors, out.errors
    assert out.terminal is not None and out.terminal.event == "complete", [e.event for e in out.events[-3:]]
    assert out.ids == list(range(1, len(out.ids) + 1)), out.ids
    assert out.text == out.terminal.data["payload"]["message"]


def test_a_resume_on_the_other_instance_is_exact(live: Cluster, fake_llm: FakeAnthropic) -> None:
    """One client reads part of an answer from A (where the turn runs), the next part from B, the rest
    through the proxy (so Last-Event-ID passes through nginx): every event once, in order."""
    fake_llm.default = paced_answer(400, pace=0.02)  # type: ignore[assignment]
    on_a, on_b, proxied = live.client(live.a.url), live.client(live.b.url), live.client(live.proxy.url)
    out = talk(on_a, "a long one", stop_after=lambda o: len(o.text.split()) >= 30)
    assert out.conversation_id and not out.terminal
    from_a = out.last_id
    follow(on_b, out, stop_after=lambda o: len(o.text.split()) >= 60)
    assert not out.terminal and out.last_id > from_a + 5
    follow(proxied, out)
    assert_exact(out)
    assert out.statuses == [200, 200, 200]
    assert live.answer(out.conversation_id).content == out.text


def test_stop_sent_to_b_stops_the_turn_on_a(live: Cluster, fake_llm: FakeAnthropic) -> None:
    fake_llm.default = Script.slow("Partial. ")
    on_a, on_b = live.client(live.a.url), live.client(live.b.url)
    stopped_at = 0.0

    def stop_on_b(out: Outcome) -> bool:
        nonlocal stopped_at
        if not stopped_at and any(e.event == "text_delta" for e in out.events):
            assert on_b.post(f"/api/conversations/{out.conversation_id}/stop").json() == {"stopped": True}
            stopped_at = time.monotonic()
        return False

    out = talk(on_a, "long", stop_after=stop_on_b)
    assert not out.errors and out.terminal is not None, out.errors
    assert out.terminal.data["payload"]["status"] == "interrupted"
    assert out.ended - stopped_at < 3.0, out.ended - stopped_at  # the watcher polls every 0.5 s
    with live.db.session() as s:
        conv = s.get(Conversation, out.conversation_id)
        assert conv is not None and conv.active_turn_id is None
    assert on_b.post(f"/api/conversations/{out.conversation_id}/stop").json() == {"stopped": False}


def test_a_rolling_restart_under_concurrent_streams(live: Cluster, fake_llm: FakeAnthropic) -> None:
    """Both instances restarted one after the other (README's procedure) while 8 clients keep sending
    through the proxy: 0 client errors, every answer exact (resumed ones too). Each instance is held
    draining for seconds (a request of its own left open, as a slow client would), still alive; nothing
    that reached the proxy meanwhile is sent to it."""
    # ~1 s answers: many are mid-way at each SIGTERM
    fake_llm.default = paced_answer(150, pace=0.02)  # type: ignore[assignment]
    clients = [live.client(live.proxy.url) for _ in range(8)]
    done = threading.Event()
    outcomes: list[Outcome] = []
    drains: dict[str, float] = {}  # when each instance's drain began
    held: list[socket.socket] = []

    def keep_talking(client: httpx.Client) -> None:
        n = 0
        while not done.is_set():
            outcomes.append(talk(client, f"question {n}"))
            n += 1

    def hold_open(inst: Instance) -> None:  # a POST whose body never comes: the instance waits for it while it drains
        held.append(socket.create_connection(("127.0.0.1", inst.port)))
        held[-1].sendall(b"POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 100\r\n\r\n{")
        time.sleep(0.2)
        drains[inst.address] = time.time()

    threads = [threading.Thread(target=keep_talking, args=(c,), daemon=True) for c in clients]
    for t in threads:
        t.start()
    try:
        wait_for(lambda: len(outcomes) >= 8, 30, "the clients to be under way")
        took = rolling_restart([live.a, live.b], live.proxy, on_restart=hold_open)
    finally:
        done.set()
        for t in threads:
            t.join(60)
        for sock in held:
            sock.close()
    errors = [e for out in outcomes for e in out.errors]
    reconnects = sum(o.reconnects for o in outcomes)
    print(f"{len(outcomes)} answers, {reconnects} resumed after `reconnect`, {sum(o.cut for o in outcomes)} "
          f"after a cut stream; restarts {took}; errors {errors}")
    assert not errors
    assert reconnects >= 1  # streams were open at a SIGTERM, and were resumed
    for out in outcomes:
        assert_exact(out)
        assert live.answer(out.conversation_id).content == out.text

    log = live.proxy.access()
    for (address, began), times in zip(drains.items(), took, strict=True):
        assert times["exit_s"] > 1.0, "the instance did not stay draining long enough to show anything"
        # begun after its listener closed (uvicorn's loop sees SIGTERM within 0.1 s), before it exited
        new = [e for e in log if began + 0.3 < e.at - e.seconds < began + times["exit_s"]]
        assert len(new) >= 5 and not [e for e in new if e.served_by == address], (address, len(new))


def test_kill_9_of_the_generating_instance(live: Cluster, fake_llm: FakeAnthropic) -> None:
    """Two turns answered by A when it is killed. The one with a reader: its resume through the proxy (A
    refuses, nginx passes it to B) finds the turn going on on B from its checkpoint, or closed as
    interrupted, within seconds; either way no id the reader holds is reused and the stored answer is what
    the terminal event says. The other conversation takes a new turn through the proxy at once (A's lease
    is worth nothing once its lock is gone): no 409 beyond a few seconds."""
    long, short = paced_answer(2000, pace=0.02), paced_answer(10, pace=0.0)

    def pick(body: dict[str, Any]) -> Script:
        last = body["messages"][-1]
        text = last["content"] if isinstance(last["content"], str) else last["content"][-1].get("text")
        return short(body) if last["role"] == "user" and text in ("next", "and now?") else long(body)

    fake_llm.default = pick  # type: ignore[assignment]
    on_a, proxied = live.client(live.a.url), live.client(live.proxy.url)
    quiet: dict[str, Outcome] = {}
    t = threading.Thread(target=lambda: quiet.setdefault("out", talk(
        on_a, "nobody reads this one", stop_after=lambda o: o.conversation_id is not None)))
    t.start()
    reader = talk(on_a, "read along", stop_after=lambda o: o.text.count(" ") >= 60)
    t.join(30)
    assert reader.conversation_id and quiet["out"].conversation_id

    def saved() -> bool:  # a checkpoint to go on from (every 0.5 s)
        with live.db.session() as s:
            return s.query(TurnEvent).filter_by(turn_id=reader.turn_id).count() > 0
    wait_for(saved, 10, "the turn's first checkpoint")
    live.a.kill()
    killed = time.monotonic()
    statuses = []  # the quiet conversation's next turn, through the proxy, at once
    while True:
        r = proxied.post("/api/chat/stream", json={"message": "next", "context": {"current_page": "tablizer"},
                                                   "conversation_id": quiet["out"].conversation_id})
        statuses.append(r.status_code)
        if r.status_code != 409 or time.monotonic() - killed > 30:
            break
        time.sleep(0.2)
    busy_for = time.monotonic() - killed
    assert statuses[-1] == 200 and busy_for < 5, (statuses, busy_for)

    held, held_last = len(reader.ids), reader.last_id
    rest = follow(proxied, reader)
    ended = time.monotonic() - killed
    terminal = rest.terminal
    assert terminal is not None and rest.statuses and set(rest.statuses) == {200}, (rest.statuses, rest.errors)
    ids = rest.ids
    assert ids == sorted(set(ids)) and ids[held] > held_last  # no id the reader holds is reused
    stored = live.answer(reader.conversation_id)
    with live.db.session() as s:
        turn = s.query(ChatTurn).filter_by(conversation_id=reader.conversation_id).one()
    print(f"after kill -9: the other conversation took a turn {busy_for:.1f} s after it ({statuses}); the turn "
          f"read {'went on' if turn.continued else 'was closed'}, terminal event {ended:.1f} s after it")
    if terminal.event == "complete":
        assert turn.continued == 1 and stored.status == "complete" and not rest.errors
        assert terminal.data["payload"]["message"] == stored.content
    else:
        assert terminal.data["code"] == "interrupted" and stored.status == "interrupted"
        assert turn.status == "interrupted" and ended < 10
    # what it held past A's last save (got again, or never stored at all) is voided by `resync`
    assert rest.text == stored.content
    after = proxied.post("/api/chat/stream", json={"message": "and now?", "context": {"current_page": "tablizer"},
                                                   "conversation_id": reader.conversation_id})
    assert after.status_code == 200, after.text

