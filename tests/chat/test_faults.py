"""Fault injection against `python -m backend serve` in its own process:
`kill -9` at points across the turn lifecycle, then a restart on the same database; SIGTERM with open
streams; a client that stops reading a long answer. SQLite and PostgreSQL (the `db_url` fixture).

Marked `faults` (subprocess servers, ~1 minute): `pytest -m "not faults"` skips them; `make test` runs them.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from backend.chat import turns
from backend.db.models import ChatTurn, Conversation, Message, TurnEvent
from backend.db.session import Database
from backend.demo.wire import Reply
from tests.conftest import add_user
from tests.fakes.anthropic_server import FakeAnthropic, Script, tool_reply
from tests.live_server import LiveServer, StreamReader, login, wait_for
from tests.sse import assembled, parse, text_of

pytestmark = pytest.mark.faults

CONTEXT = {"current_page": "tablizer"}
SEARCH = "search_pubmed"


def user_text(message: dict[str, Any]) -> str:
    """What the user typed: the last text block (the turn's page context comes before it)."""
    content = message["content"]
    if isinstance(content, str):
        return content
    texts = [b.get("text", "") for b in content if b.get("type") == "text"]
    return texts[-1] if texts else ""


def has_tool_result(message: dict[str, Any]) -> bool:
    content = message["content"]
    return isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)


def scripted_by_message(replies: dict[str, Any]) -> Any:
    """One script per user message (turns run concurrently, so arrival order says nothing); a request
    that continues after a tool result gets `replies["<message> +tool"]`."""
    def pick(body: dict[str, Any]) -> Script:
        last = body["messages"][-1]
        if has_tool_result(last):
            asked = next(user_text(m) for m in reversed(body["messages"][:-1])
                         if m["role"] == "user" and not has_tool_result(m))
            return replies[f"{asked} +tool"]
        return replies[user_text(last)]
    return pick


def endless(sentence: str) -> Script:
    """Two words every 50 ms for minutes: longer than any test waits, however loaded the machine."""
    return Script.answer(Reply.text(" ".join([sentence] * 3000)), delay=0.05)


def rows(db: Database, conversation_id: int) -> list[Message]:
    with db.session() as s:
        return list(s.query(Message).filter_by(conversation_id=conversation_id).order_by(Message.id))


def text_seen(reader: StreamReader) -> str:
    return "".join(e.data["text"] for e in reader.events if e.event == "text_delta")


def started(client: httpx.Client, message: str, conversation_id: int | None = None,
            headers: dict[str, str] | None = None) -> StreamReader:
    body: dict[str, Any] = {"message": message, "context": CONTEXT}
    if conversation_id is not None:
        body["conversation_id"] = conversation_id
    reader = StreamReader(client, "POST", "/api/chat/stream", json=body, headers=headers)
    reader.start()
    return reader


@pytest.fixture
def clients() -> Iterator[list[httpx.Client]]:
    """Signed-in HTTP clients of the test, closed at its end."""
    opened: list[httpx.Client] = []
    yield opened
    for client in opened:
        client.close()


def signed_in(clients: list[httpx.Client], server: LiveServer) -> httpx.Client:
    clients.append(login(server.url, "alice"))
    return clients[-1]


def test_kill_9_across_the_turn_lifecycle(db_url: str, db: Database, fake_llm: FakeAnthropic, tmp_path: Path,
                                          clients: list[httpx.Client], record_property: Any) -> None:
    """Four turns at four points of their lifecycle when the server is killed: just opened (no text),
    mid-text after checkpoints, mid-text after a finished tool pair, mid-way through a tool call's
    input. On the server that takes over (same database) every conversation is readable, resumable to an
    `interrupted` terminal event, continuable (and the model accepts its history), and Stop is honest."""
    fake_llm.default = scripted_by_message({
        "opened": Script.answer(Reply.text("Too late to be seen."), delay=30),
        "streaming": endless("Streaming words."),
        "tooled": Script.answer(tool_reply(SEARCH, {"query": "egfr"}, preface="Let me search.")),
        "tooled +tool": endless("After the search."),
        "in tool": Script.answer(tool_reply(SEARCH, {"query": "egfr " * 30}, preface="Checking now."),
                                 delay=1.0),
        "after restart": Script.text("A fresh answer."),
    })
    add_user(db, "alice")
    # The server that takes over is started beside the one that dies (as in a rolling restart, or with
    # a second worker), so what is measured after the kill is the lease, not an interpreter's start-up.
    first = LiveServer(db_url, fake_llm.url, tmp_path / "first.log")
    second = LiveServer(db_url, fake_llm.url, tmp_path / "second.log")
    first.launch()
    second.launch()
    try:
        first.wait_ready()
        second.wait_ready()
        client = signed_in(clients, first)
        streaming, tooled, in_tool = started(client, "streaming"), started(client, "tooled"), started(client, "in tool")

        def mid_text_for(reader: StreamReader, seconds: float, after: str = "conversation") -> bool:
            if after not in reader.types:
                return False
            mark = reader.types.index(after)
            texts = [t for t, e in zip(reader.times[mark:], reader.events[mark:], strict=True)
                     if e.event == "text_delta"]
            return bool(texts) and time.monotonic() - texts[0] >= seconds

        wait_for(lambda: mid_text_for(streaming, 1.2) and mid_text_for(tooled, 0.8, after="tool_complete")
                 and "text_delta" in in_tool.types, 30, "three turns at their kill points")
        opened = started(client, "opened")
        wait_for(lambda: opened.conversation_id is not None, 15, "the new turn's conversation event")
        first.kill()
        killed = time.monotonic()
        assert "tool_complete" not in in_tool.types, "the tool call finished before the kill; slow its input"
    except BaseException:
        second.kill()
        raise
    finally:
        first.kill()
    readers = {"opened": opened, "streaming": streaming, "tooled": tooled, "in tool": in_tool}
    for reader in readers.values():
        reader.join(10)
        assert reader.broken or "error" not in reader.types, (reader.types[-3:], reader.events[-1])
    conv = {name: r.conversation_id for name, r in readers.items()}
    assert all(conv.values())

    try:
        client = signed_in(clients, second)
        attempts = []  # a new turn in the "opened" conversation, retried while it answers 409

        def accepted() -> bool:
            r = client.post("/api/chat/stream", json={"message": "after restart", "context": CONTEXT,
                                                      "conversation_id": conv["opened"]})
            attempts.append(r.status_code)
            return r.status_code == 200

        wait_for(accepted, 20, "the conversation to take a new turn after the restart", every=0.2)
        busy_for = time.monotonic() - killed
        # Stop on the dead worker's other turns, inside their 10 s leases: each is marked interrupted now
        stop_at_once = {name: client.post(f"/api/conversations/{cid}/stop").json()
                        for name, cid in conv.items() if name != "opened"}
        stopped_within = time.monotonic() - killed
        record_property("busy_after_kill_s", round(busy_for, 2))
        print(f"a new turn was accepted {busy_for:.1f} s after the kill ({len(attempts)} attempts, "
              f"{attempts.count(409)} answered 409); Stop {stopped_within:.1f} s after it said {stop_at_once}")
        assert attempts.count(409) == 0 and busy_for < 3, attempts  # the worker is dead: no lease to wait out
        assert stopped_within < turns.LEASE.total_seconds()
        assert all(answer == {"stopped": True} for answer in stop_at_once.values()), stop_at_once
        for cid in conv.values():
            assert client.get(f"/api/conversations/{cid}").status_code == 200
        resumed = {name: StreamReader(client, "GET", f"/api/conversations/{cid}/stream",
                                      headers={"Last-Event-ID": readers[name].events[-1].id or "0"})
                   for name, cid in conv.items() if name != "opened"}  # "opened" has a newer turn now
        for reader in resumed.values():
            reader.start()

        for name, reader in resumed.items():
            reader.join(20)
            assert not reader.is_alive(), f"resuming {name} never ended"
            assert reader.status == 200 and reader.events, (name, reader.status, reader.broken)
            ids = [int(e.id or 0) for e in reader.events]
            held = int(readers[name].events[-1].id or 0)
            assert ids == sorted(set(ids)) and ids[0] > held  # after every id the reader holds, each once
            assert reader.events[-1].event == "error" and reader.events[-1].data["code"] == "interrupted", (
                name, reader.types)
            # what the reader held past the dead server's last save is voided: its answer is the stored one
            assert reader.events[0].event == "resync", (name, reader.types)
            assert assembled(text_seen(readers[name]), reader.events) == rows(db, conv[name])[1].content, name
            assert client.post(f"/api/conversations/{conv[name]}/stop").json() == {"stopped": False}

        for name, cid in conv.items():
            stored = rows(db, cid)
            assert [(m.role) for m in stored][:2] == ["user", "assistant"], name
            user, answer = stored[0], stored[1]
            assert user.content == name and user.status == "complete"
            assert answer.status == "interrupted", (name, answer.status)
            assert text_seen(readers[name]).startswith(answer.content), (name, answer.content)
            with db.session() as s:
                turn = s.query(ChatTurn).filter_by(assistant_message_id=answer.id).one()
                assert turn.status == "interrupted"
                last = s.query(TurnEvent).filter_by(turn_id=turn.id).order_by(TurnEvent.seq.desc()).first()
                assert last is not None and last.type == "error" and last.data["code"] == "interrupted"
        assert rows(db, conv["opened"])[1].content == ""
        assert len(rows(db, conv["streaming"])[1].content) >= len("Streaming words. ") * 5  # ≥ 1 s of text
        tool_history = rows(db, conv["tooled"])[1].extras["tool_history"]
        assert [t["tool_name"] for t in tool_history] == [SEARCH]
        assert rows(db, conv["tooled"])[1].content.startswith("Let me search.")
        assert rows(db, conv["in tool"])[1].extras.get("tool_history") in (None, [])

        for name in ("streaming", "tooled", "in tool"):
            r = client.post("/api/chat/stream", json={"message": "after restart", "context": CONTEXT,
                                                      "conversation_id": conv[name]})
            assert r.status_code == 200 and "A fresh answer." in r.text, (name, r.status_code, r.text[-300:])
        sent = [b for b in fake_llm.requests if user_text(b["messages"][-1]) == "after restart"]
        assert len(sent) == 4
        tooled_history = next(b for b in sent if b["messages"][0]["content"] == "tooled" or
                              user_text(b["messages"][0]) == "tooled")["messages"]
        blocks = [b["type"] for m in tooled_history if isinstance(m["content"], list) for b in m["content"]]
        assert "tool_use" in blocks and "tool_result" in blocks
        assert not fake_llm.violations
        with db.session() as s:
            assert all(c.active_turn_id is None for c in s.query(Conversation))
    finally:
        second.kill()


def test_sigterm_ends_every_open_stream_and_keeps_the_partials(db_url: str, db: Database, fake_llm: FakeAnthropic,
                                                               tmp_path: Path, clients: list[httpx.Client]) -> None:
    """SIGTERM with 20 streams open on a slow model: each gets a terminal event telling it to resume, the
    process exits in under 5 s, and each partial answer is stored with its turn `suspended`; the server
    that starts next goes on with them, and a resumed stream ends with the answer continued."""
    fake_llm.default = endless("Still going.")
    add_user(db, "alice")
    server = LiveServer(db_url, fake_llm.url, tmp_path / "server.log")
    server.start()
    try:
        client = signed_in(clients, server)
        client.timeout = httpx.Timeout(60.0)
        readers = [started(client, f"question {i}") for i in range(20)]
        wait_for(lambda: all("text_delta" in r.types for r in readers), 30, "20 streams answering")
        took = server.terminate()
    finally:
        server.kill()
    for reader in readers:
        reader.join(5)
    print(f"exit {took:.2f} s after SIGTERM; last events {sorted({r.types[-1] for r in readers})}")
    assert took < 5.0, server.log_tail()
    for reader in readers:
        assert not reader.broken, reader.broken
        assert reader.types[-1] in ("reconnect", "error", "complete"), reader.types[-5:]
    conv_ids = [r.conversation_id for r in readers]
    for cid, reader in zip(conv_ids, readers, strict=True):
        answer = rows(db, cid)[1]
        assert answer.status == "running" and answer.content, (answer.status, answer.content[:40])
        with db.session() as s:
            assert s.query(ChatTurn).filter_by(conversation_id=cid).one().status == "suspended"
        assert text_seen(reader).startswith(answer.content) or answer.content.startswith(text_seen(reader))
    with db.session() as s:
        assert all(c.active_turn_id is None for c in s.query(Conversation))

    saved = rows(db, conv_ids[0])[1].content
    fake_llm.default = Script.text("And that is all.")
    again = LiveServer(db_url, fake_llm.url, tmp_path / "server.log")
    again.start()
    try:
        client = signed_in(clients, again)
        last_real = next(e.id for e in reversed(readers[0].events) if e.id)
        r = client.get(f"/api/conversations/{conv_ids[0]}/stream", headers={"Last-Event-ID": last_real})
        tail = parse(r.text)
        assert r.status_code == 200 and tail[-1].event == "complete", tail[-3:]
        assert tail[-1].data["payload"]["message"] == saved + "And that is all."
    finally:
        again.kill()


def test_a_frozen_client_does_not_hold_the_answer(db_url: str, db: Database, fake_llm: FakeAnthropic,
                                                  tmp_path: Path, clients: list[httpx.Client]) -> None:
    """A client that sends its question and never reads the 8 MB answer: the answer is stored `complete`
    anyway, and the conversation takes the next turn."""
    answer_text = " ".join(["x" * 50_000] * 160)  # 8 MB in 54 deltas: more than the socket buffers hold
    fake_llm.script(Script.text(answer_text), Script.text("Next one."))
    add_user(db, "alice")
    server = LiveServer(db_url, fake_llm.url, tmp_path / "server.log")
    server.start()
    frozen = socket.socket()
    try:
        client = signed_in(clients, server)
        cookie = "; ".join(f"{k}={v}" for k, v in client.cookies.items())
        body = httpx.Request("POST", "/", json={"message": "a long one please", "context": CONTEXT}).content
        frozen.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        frozen.connect(("127.0.0.1", server.port))
        frozen.sendall(b"POST /api/chat/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                       + f"Cookie: {cookie}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
        # …and never reads a byte.

        def stored() -> Message | None:
            with db.session() as s:
                return s.query(Message).filter_by(role="assistant", status="complete").one_or_none()

        wait_for(lambda: stored() is not None, 90, "the frozen client's answer to be stored complete", every=0.25)
        answer = stored()
        assert answer is not None and answer.content == answer_text
        r = client.post("/api/chat/stream", json={"message": "and next?", "context": CONTEXT,
                                                  "conversation_id": answer.conversation_id})
        assert r.status_code == 200 and "Next one." in r.text
    finally:
        frozen.close()
        server.kill()


def resumed_on_a_new_server(db_url: str, fake_llm: FakeAnthropic, tmp_path: Path, clients: list[httpx.Client],
                            conversation_id: int | None, last_id: int) -> StreamReader:
    """A server started after the first one went down, and a reader that resumes there from `last_id`
    (read to its end, or for a minute)."""
    again = LiveServer(db_url, fake_llm.url, tmp_path / "again.log")
    again.start()
    try:
        client = signed_in(clients, again)
        rest = StreamReader(client, "GET", f"/api/conversations/{conversation_id}/stream",
                            headers={"Last-Event-ID": str(last_id)})
        rest.start()
        rest.join(60)
    finally:
        again.kill()
    return rest


WHOLE = " ".join(f"w{i}" for i in range(1200))  # ~30 s at the fake's pace: SIGTERM lands mid-answer


def continues_from_prefill(body: dict[str, Any], pace: float = 0.05) -> Script:
    """The whole answer, slowly (a delta every `pace` s); a request ending in the answer so far (a
    prefill) gets the rest of it."""
    last = body["messages"][-1]
    if last["role"] == "assistant":
        prefill = last["content"][-1]["text"]
        assert WHOLE.startswith(prefill), prefill[-40:]
        return Script.answer(Reply.text(WHOLE[len(prefill):]), delay=0.002)
    return Script.answer(Reply.text(WHOLE), delay=pace)


def test_a_restart_mid_answer_is_only_a_pause(db_url: str, db: Database, fake_llm: FakeAnthropic, tmp_path: Path,
                                              clients: list[httpx.Client], record_property: Any) -> None:
    """SIGTERM mid-answer: the turn is saved `suspended`; the server that starts next goes on with it
    from the checkpoint (the model continues the saved partial as a prefill), and the client that resumes
    with its Last-Event-ID reads the rest: the whole answer, ids strictly increasing, no duplicate."""
    fake_llm.default = continues_from_prefill  # type: ignore[assignment]
    add_user(db, "alice")
    server = LiveServer(db_url, fake_llm.url, tmp_path / "server.log")
    server.start()
    try:
        client = signed_in(clients, server)
        reader = started(client, "the long one")
        wait_for(lambda: reader.types.count("text_delta") >= 40, 30, "the answer to be well under way")
        server.terminate()
    finally:
        server.kill()
    reader.join(10)
    assert reader.types[-1] == "reconnect", reader.types[-3:]
    conv_id = reader.conversation_id
    with db.session() as s:
        turn = s.query(ChatTurn).filter_by(conversation_id=conv_id).one()
        assert turn.status == "suspended" and turn.resume_state is not None
        conv = s.get(Conversation, conv_id)
        assert conv is not None and conv.active_turn_id is None  # nothing blocks the conversation meanwhile
    before = [e for e in reader.events if e.id and e.event != "reconnect"]  # reconnect repeats the last id
    last_id = int(before[-1].id or 0)

    paused = time.monotonic()
    rest = resumed_on_a_new_server(db_url, fake_llm, tmp_path, clients, conv_id, last_id)
    record_property("pause_s", round(time.monotonic() - paused, 2))
    assert rest.status == 200 and rest.events and rest.events[-1].event == "complete", (rest.status, rest.types[-3:])
    ids = [int(e.id or 0) for e in [*before, *rest.events]]
    assert ids == list(range(1, len(ids) + 1))  # strictly increasing, no gap, no duplicate
    assert text_seen(reader) + text_seen(rest) == WHOLE
    assert rest.events[-1].data["payload"]["message"] == WHOLE
    assert rest.events[-1].data["payload"]["status"] == "complete"
    asked = [b for b in fake_llm.requests if b["messages"][-1]["role"] == "assistant"]
    assert len(fake_llm.requests) == 2 and len(asked) == 1  # one continuation, no second generation
    assert WHOLE.startswith(asked[0]["messages"][-1]["content"][-1]["text"])
    assert not fake_llm.violations
    with db.session() as s:
        turn = s.query(ChatTurn).filter_by(conversation_id=conv_id).one()
        assert turn.status == "complete" and turn.continued == 1
        answer = rows(db, conv_id)[1]
        assert answer.status == "complete" and answer.content == WHOLE
        assert s.query(TurnEvent).filter_by(turn_id=turn.id).count() == ids[-1]


def test_after_kill_9_no_event_id_is_reused(db_url: str, db: Database, fake_llm: FakeAnthropic, tmp_path: Path,
                                            clients: list[httpx.Client]) -> None:
    """`kill -9` while the reader holds events its server never saved: the server that goes on with the
    turn numbers its events after every id the reader may hold, so the reader's resume gets every event
    of the continuation, none under an id it already has for other text."""
    fake_llm.default = lambda body: continues_from_prefill(body, pace=0.01)  # type: ignore[assignment]
    add_user(db, "alice")
    server = LiveServer(db_url, fake_llm.url, tmp_path / "server.log")
    server.start()

    def stored_ids(turn_id: str) -> list[int]:
        with db.session() as s:
            return [e.seq for e in s.query(TurnEvent).filter_by(turn_id=turn_id).order_by(TurnEvent.seq)]

    try:
        client = signed_in(clients, server)
        reader = started(client, "the long one")
        wait_for(lambda: reader.types.count("text_delta") >= 20, 30, "the answer to be well under way")
        turn_id = reader.events[0].data["turn_id"]
        # A delta every 10 ms, a save every 500 ms: the reader is nearly always ahead of what is stored.
        wait_for(lambda: stored_ids(turn_id) != [], 10, "a first save")
        wait_for(lambda: int(reader.events[-1].id or 0) > stored_ids(turn_id)[-1], 10,
                 "the reader to be ahead of the last save", every=0.001)
        server.kill()
    finally:
        server.kill()
    reader.join(10)
    held = max(int(e.id or 0) for e in reader.events)
    saved = stored_ids(turn_id)
    assert saved and saved[-1] < held, (saved[-1:], held)  # the reader holds ids the database never saw

    rest = resumed_on_a_new_server(db_url, fake_llm, tmp_path, clients, reader.conversation_id, held)
    assert rest.status == 200 and rest.events and rest.events[-1].event == "complete", (rest.status, rest.types[-3:])
    assert rest.events[-1].data["payload"]["message"] == WHOLE
    continuation = [i for i in stored_ids(turn_id) if i > saved[-1]]  # every event the new server wrote
    assert [int(e.id or 0) for e in rest.events] == continuation
    assert continuation[0] > held
    # The model went on from the last save, so the text the reader got after it comes again: the `resync`
    # that opens the continuation voids it, and the reader's answer reads as the stored one, each word once.
    assert rest.events[0].event == "resync" and rest.events[0].data["after"] == saved[-1]
    assert assembled(text_of(reader.events), rest.events) == WHOLE
