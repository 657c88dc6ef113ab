"""A drain (SIGTERM, then the lifespan's shutdown) on one worker, in process, on SQLite and PostgreSQL:
every running turn ends `complete` or is saved `suspended` with its resume state — the young one that
has no text yet and the one whose send began as the drain began too — every open reader ends with
`reconnect`, a new send is refused 503, and a second worker goes on with every suspended turn to its end.
An answer the model had finished stays `complete`; a turn whose worker went before its first checkpoint
is taken over from its start.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import pytest
from sse_starlette import ServerSentEvent
from starlette.testclient import TestClient

from backend.agent.llm import make_llm
from backend.agent.schemas import TextDelta
from backend.chat import turns
from backend.chat.begin import Begun, ChatRequest
from backend.chat.log import Closing, Frame, TurnLog
from backend.chat.service import ChatService
from backend.chat.sse import encode
from backend.chat.turn import ResumeState
from backend.config import Settings
from backend.db.models import ChatTurn, Message
from backend.db.session import Database
from backend.demo.wire import Reply
from backend.errors import Draining
from backend.main import demo_model
from tests.conftest import add_user
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.fakes.fake_page import CONTEXT

pytestmark = pytest.mark.usefixtures("test_registry")

STREAMING = [f"streaming {i}" for i in range(4)]
QUIET = "quiet"  # its model has not sent a word yet when the drain comes
LATE = "late"  # its send is in `begin` when the drain begins


def first_answers(body: dict[str, Any]) -> Script:
    last = body["messages"][-1]
    content = last["content"]
    asked = content if isinstance(content, str) else content[-1].get("text", "")
    if asked == QUIET:
        return Script.stall(after_deltas=None, hold=15)
    return Script.slow("Words keep coming. ", delay=0.02)


async def started(settings: Settings, db: Database) -> ChatService:
    chat = ChatService(db, make_llm(settings, demo_model(settings)))
    await anyio.to_thread.run_sync(chat.presence.hold)
    return chat


async def stopped(chat: ChatService) -> None:
    await chat.supervisor.shutdown()
    await anyio.to_thread.run_sync(chat.presence.release)
    await chat.llm.close()


async def continued_by_a_new_worker(settings: Settings, db: Database) -> None:
    """A worker started after the others are gone sweeps the store, goes on with what it finds, and stops."""
    worker = await started(settings, db)
    try:
        await worker.supervisor.sweep_and_continue()
        await until(lambda: not worker.supervisor.runners, "the continued turns to end")
    finally:
        await stopped(worker)


class Reader:
    """One response's SSE output, as its client gets it: the event types, in order."""

    def __init__(self, chat: ChatService, user_id: int, message: str) -> None:
        self.types: list[str] = []
        self.task = asyncio.create_task(self._read(chat, user_id, message))

    async def _read(self, chat: ChatService, user_id: int, message: str) -> None:
        frames: AsyncIterator[Any] = await chat.submit(lambda: user_id, ChatRequest(message=message, context=CONTEXT))
        async for item in encode(frames):
            if isinstance(item, ServerSentEvent):
                self.types.append(str(item.event))
            else:
                self.types.append(item.decode().split("event: ", 1)[1].split("\r\n", 1)[0])


async def until(condition: Callable[[], bool], what: str, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        await asyncio.sleep(0.02)


def turn_rows(db: Database) -> dict[str, tuple[ChatTurn, Message]]:
    """Each turn and its answer, by the user's message."""
    with db.session() as s:
        out = {}
        for turn in s.query(ChatTurn):
            asked, answer = s.get(Message, turn.user_message_id), s.get(Message, turn.assistant_message_id)
            assert asked is not None and answer is not None
            out[asked.content] = (turn, answer)
        return out


async def test_a_drain_leaves_every_turn_finished_or_resumable_and_every_reader_told_to_resume(
        settings: Settings, db: Database, fake_llm: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_llm.default = first_answers  # type: ignore[assignment]
    user_id = add_user(db, "alice")
    first = await started(settings, db)
    readers = {m: Reader(first, user_id, m) for m in [*STREAMING, QUIET]}
    await until(lambda: all("text_delta" in readers[m].types for m in STREAMING)
                and len(fake_llm.requests) == len(readers), "the streams to be under way")

    batches: list[int] = []
    save_suspended = turns.save_suspended

    def counted(s: Any, batch: Any) -> set[str]:
        batches.append(len(batch))
        return save_suspended(s, batch)

    monkeypatch.setattr(turns, "save_suspended", counted)
    entered, go_on = threading.Event(), threading.Event()
    begin = first._begin

    def begin_as_the_drain_begins(*args: Any) -> Begun:
        entered.set()
        go_on.wait(10)
        return begin(*args)

    monkeypatch.setattr(first, "_begin", begin_as_the_drain_begins)
    readers[LATE] = Reader(first, user_id, LATE)
    await until(entered.is_set, "the late send to be in begin")
    first.close_readers()  # SIGTERM: sse-starlette sets every open stream's shutdown event
    go_on.set()
    await until(lambda: all(r.task.done() for r in readers.values()), "every reader to end")
    with pytest.raises(Draining):  # a send that comes now begins nothing here: the client retries elsewhere
        await first.submit(lambda: user_id, ChatRequest(message="too late", context=CONTEXT))
    drained = time.monotonic()
    await stopped(first)  # the lifespan's shutdown
    assert time.monotonic() - drained < 3.0
    assert sum(batches) == len(readers) and len(batches) < sum(batches)  # saved together, not each alone

    for message, reader in readers.items():
        assert reader.task.exception() is None
        assert reader.types[0] == "conversation" and reader.types[-1] == "reconnect", (message, reader.types)
    assert "text_delta" not in readers[QUIET].types
    rows = turn_rows(db)
    assert sorted(rows) == sorted(readers)  # "too late" began no turn
    for message, (turn, answer) in rows.items():
        assert turn.status in ("suspended", "complete"), (message, turn.status)
        saved = ResumeState.load(turn.resume_state)
        assert turn.status == "complete" or (saved is not None and saved.continuable), message
        assert answer.status in ("running", "complete"), (message, answer.status)  # never interrupted
    seen = {m: turn_rows(db)[m][1].content for m in STREAMING}
    assert all(seen.values())

    # The surviving worker goes on with each suspended turn, to its end.
    fake_llm.default = Script.answer(Reply.text(" And that is all."))
    await continued_by_a_new_worker(settings, db)
    for message, (turn, answer) in turn_rows(db).items():
        assert turn.status == answer.status == "complete", (message, turn.status, answer.status)
        assert answer.content.endswith("And that is all."), (message, answer.content[-40:])
        if message in seen:
            assert answer.content.startswith(seen[message])


def test_a_send_to_a_draining_worker_is_refused_so_that_it_is_retried(
        alice: TestClient, app: Any, db: Database) -> None:
    """Once the worker tells its streams to resume elsewhere, a send that got past the middleware is 503
    with Retry-After (nginx passes it on: `proxy_next_upstream http_503`; the tray retries a 503)."""
    app.state.chat.close_readers()
    r = alice.post("/api/chat/stream", json={"message": "hello", "context": CONTEXT})
    assert r.status_code == 503 and r.headers["retry-after"] == "1" and r.json()["error"] == "unavailable"
    with db.session() as s:
        assert s.query(ChatTurn).count() == 0


async def test_a_turn_its_worker_left_before_its_first_checkpoint_is_taken_over_not_interrupted(
        settings: Settings, db: Database, fake_llm: FakeAnthropic) -> None:
    """A drain that runs out of time leaves turns `running` (its worker then gone); the youngest have had
    no checkpoint. Such a turn — here one begun whose runner never started, as when uvicorn cancels a
    request still in `begin` — is resumable from its start: the next worker answers it."""
    fake_llm.default = Script.answer(Reply.text("Answered by the next worker."))
    user_id = add_user(db, "alice")
    first = await started(settings, db)
    begun = await anyio.to_thread.run_sync(first._begin, lambda: user_id, ChatRequest(message="hi", context=CONTEXT),
                                           None)
    assert begun.turn is not None
    await stopped(first)  # it never ran the turn: gone, the turn left `running`
    assert turn_rows(db)["hi"][0].status == "running"

    await continued_by_a_new_worker(settings, db)
    turn, answer = turn_rows(db)["hi"]
    assert turn.status == answer.status == "complete" and turn.continued == 1
    assert answer.content == "Answered by the next worker."


async def test_an_answer_finished_when_the_drain_comes_is_saved_complete(
        settings: Settings, db: Database, fake_llm: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model has said all; the turn's final save waits for a checkpoint write under way (slow, under
    load) when the drain stops every turn. The answer is stored `complete`, not interrupted."""
    words = " ".join(f"w{i}" for i in range(60))
    fake_llm.default = Script.answer(Reply.text(words), delay=0.05)  # ~1 s: a checkpoint comes while it streams
    user_id = add_user(db, "alice")
    first = await started(settings, db)
    writing, go_on = threading.Event(), threading.Event()
    write = first.saves._write_together

    def slow_write(batch: Any) -> None:
        writing.set()
        go_on.wait(10)
        write(batch)

    monkeypatch.setattr(first.saves, "_write_together", slow_write)
    reader = Reader(first, user_id, "all of it")
    await until(lambda: writing.is_set() and "usage" in reader.types, "the answer to end while a checkpoint writes")
    first.close_readers()
    shutdown = asyncio.create_task(stopped(first))
    await asyncio.sleep(0.1)  # the drain stops the turns while its final save waits
    go_on.set()
    await shutdown
    turn, answer = turn_rows(db)["all of it"]
    assert turn.status == answer.status == "complete" and answer.content == words


class FrameReader:
    """One response's frames as its client gets them (ids and text), until its turn ends or it is told to resume."""

    def __init__(self, frames: AsyncIterator[Frame]) -> None:
        self.frames: list[Frame] = []
        self.task = asyncio.create_task(self._read(frames))

    async def _read(self, frames: AsyncIterator[Frame]) -> None:
        with contextlib.suppress(Closing):
            async for frame in frames:
                self.frames.append(frame)

    @property
    def text(self) -> str:
        return "".join(f.data["text"] for f in self.frames if f.type == "text_delta")


async def test_turns_a_drain_could_not_save_by_its_deadline_are_suspended_with_every_frame_their_readers_hold(
        settings: Settings, db: Database, fake_llm: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    """The turns' own suspensions wait (queued behind slow writes on a loaded machine) past the drain's
    deadline: the shutdown still ends by then and the turns are stored `suspended` with every event their
    readers were sent. The next worker numbers on from there (no gap of ids) and its readers, resuming where
    they were, assemble the stored answer: no text twice."""
    fake_llm.default = Script.slow("Words keep coming. ", delay=0.02)
    user_id = add_user(db, "alice")
    first = await started(settings, db)
    first.supervisor.drain_seconds = 0.5
    queued: list[str] = []
    never = asyncio.Event()

    async def queued_for_ever(turn: Any) -> bool:
        queued.append(turn.turn_id)
        await never.wait()
        return False

    monkeypatch.setattr(first.saves, "suspend", queued_for_ever)
    asked = [f"question {i}" for i in range(3)]
    readers = {m: FrameReader(await first.submit(lambda: user_id, ChatRequest(message=m, context=CONTEXT)))
               for m in asked}
    await until(lambda: all(len(r.frames) > 30 for r in readers.values()), "the answers to be well under way")
    first.close_readers()  # SIGTERM
    await until(lambda: all(r.task.done() for r in readers.values()), "every reader to be told to resume")
    began = time.monotonic()
    try:
        await stopped(first)
        assert time.monotonic() - began < 2.0  # the deadline (0.5 s) and one write
    finally:
        never.set()
    assert len(queued) == len(asked)  # each turn tried to save itself, and could not in time
    rows = turn_rows(db)
    for m in asked:
        turn, _answer = rows[m]
        assert turn.status == "suspended", (m, turn.status)
        assert turn.last_event_id >= readers[m].frames[-1].id  # every id a reader holds is stored

    fake_llm.default = Script.answer(Reply.text(" And that is all."))
    second = await started(settings, db)
    try:
        turn_ids = {m: rows[m][0].id for m in asked}
        for m in asked:  # each client resumes on the surviving worker from the last id it holds
            reader = readers[m]
            reader.frames.extend([frame async for frame in second.read(turn_ids[m], reader.frames[-1].id)])
        await until(lambda: not second.supervisor.runners, "the continued turns to end")
    finally:
        await stopped(second)
    for m, (turn, answer) in turn_rows(db).items():
        frames = readers[m].frames
        assert turn.status == answer.status == "complete", (m, turn.status)
        assert [f.id for f in frames] == list(range(1, len(frames) + 1)), m  # each id once, none skipped
        assert readers[m].text == answer.content and answer.content.endswith("And that is all."), m


async def test_a_reader_is_never_given_what_a_turn_logged_after_its_state_was_saved_for_another_worker() -> None:
    """What a runner still unwinding logs after the drain wrote its turn `suspended` (`TurnLog.seal`) is
    unknown to the worker that goes on with it: a reader that got it would see that text again."""
    log = TurnLog("t")
    for word in ("one", "two"):
        log.append(TextDelta(text=word))
    log.seal()
    log.append(TextDelta(text="three"))
    log.close()
    got: list[int] = []
    with pytest.raises(Closing):
        async for frame in log.follow(0):
            got.append(frame.id)
    assert got == [1, 2]
