"""The batched progress saves of a worker's running turns (`ProgressWriter`), against a real database."""

from __future__ import annotations

import asyncio
import time
from itertools import pairwise
from typing import Any

import pytest
from sqlalchemy import select
from starlette.testclient import TestClient

from backend.chat import turns
from backend.chat.log import Frame, TurnLog
from backend.chat.progress import SLICES, Progress, ProgressWriter
from backend.db.models import ChatTurn, Message, TurnEvent
from backend.db.session import Database
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.fakes.fake_page import CONTEXT
from tests.sse import parse

pytestmark = pytest.mark.usefixtures("test_registry")


def test_one_turn_in_conflict_does_not_cost_the_others_their_checkpoint(alice: TestClient, fake_llm: FakeAnthropic,
                                                                         db: Database) -> None:
    """Two running turns saved in one batch; one turn's next event id is already stored (its lease lapsed
    under overload and the sweep wrote its end). The other turn's events, `last_event_id` and answer so far
    are saved all the same; the one in conflict is left as it was."""
    progress: list[Progress] = []
    for turn_id, message_id, last in _running_again(alice, fake_llm, db, 2):
        frames = [Frame(id=last + i, type="text_delta", data={"text": f"more {i}", "type": "text_delta"})
                  for i in (1, 2)]
        progress.append(Progress(turn_id, message_id, frames, "so far", {"turn_id": turn_id}))
    with db.session() as s:
        conflicted = progress[0]
        s.add(TurnEvent(turn_id=conflicted.turn_id, seq=conflicted.frames[0].id, type="error", data={}))

    assert ProgressWriter(db)._write(progress) == {progress[1].turn_id}

    with db.session() as s:
        def stored(p: Progress) -> tuple[Any, ...]:
            turn = s.get(ChatTurn, p.turn_id)
            message = s.get(Message, p.message_id)
            assert turn is not None and message is not None
            seqs = s.scalars(select(TurnEvent.seq).where(TurnEvent.turn_id == p.turn_id).order_by(TurnEvent.seq))
            return turn.last_event_id, message.content, list(seqs)

        last, content, seqs = stored(progress[1])
        assert last == progress[1].frames[-1].id and content == "so far" and seqs[-2:] == [f.id for f in
                                                                                          progress[1].frames]
        last, content, seqs = stored(conflicted)
        assert last == conflicted.frames[0].id - 1 and content != "so far"
        assert seqs[-1] == conflicted.frames[0].id  # only the event that was there before


def test_the_frames_of_many_turns_written_together_read_back_as_they_were(alice: TestClient, fake_llm: FakeAnthropic,
                                                                         db: Database) -> None:
    """One batch of several turns' frames (PostgreSQL: one statement of arrays; SQLite: an executemany)
    comes back per turn in order, each frame's data as it was: text beyond ASCII, quotes and backslashes,
    nested payloads."""
    written: dict[str, list[Frame]] = {}
    for turn_id, _, last in _running_again(alice, fake_llm, db, 3):
        written[turn_id] = [
            Frame(id=last + 1, type="text_delta",
                  data={"text": f"Ménière's «{turn_id[:4]}» \\ \"q\" 😀 ", "type": "text_delta"}),
            Frame(id=last + 2, type="tool_start", data={"tool": "search", "input": {"q": ["a", {"b": None}], "n": 2.5},
                                                        "index": 0, "type": "tool_start"}),
            Frame(id=last + 3, type="text_delta", data={"text": "", "type": "text_delta"})]
    with db.session() as s:
        turns.save_frames(s, written.items())
    with db.session() as s:
        for turn_id, frames in written.items():
            after = frames[0].id - 1
            assert [(f.id, f.type, f.data) for f in turns.stored_frames(s, turn_id, after)] == [
                (f.id, f.type, f.data) for f in frames]


def test_checkpoints_write_every_event_and_the_answer_only_when_it_has_doubled(
        alice: TestClient, app: Any, fake_llm: FakeAnthropic, db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long answer streams through many checkpoints. Each one stores the new events; the answer, its
    blocks and the resume state are rewritten only when the text has doubled (or the turn's structure
    changed), so the text written adds up to a few times the answer, not the answer times the checkpoints.
    After every checkpoint the stored answer plus the text of the events after its `through` is exactly
    the text the readers were sent: what a worker that takes the turn over, or the sweep, puts together."""
    from backend.chat import turns
    from backend.demo.wire import Reply

    writer = app.state.chat.saves
    writer.every = 0.02
    written: list[str | None] = []
    broken: list[str] = []
    write = writer._write_together

    def checked(batch: list[Progress]) -> None:
        write(batch)
        with db.session() as s:
            for p in batch:
                turn, message = s.get(ChatTurn, p.turn_id), s.get(Message, p.message_id)
                assert turn is not None and message is not None and turn.resume_state is not None
                sent = "".join(d["text"] for d in s.scalars(select(TurnEvent.data).where(
                    TurnEvent.turn_id == p.turn_id, TurnEvent.type == "text_delta").order_by(TurnEvent.seq)))
                through = turn.resume_state.get("through", turn.last_event_id)
                rebuilt = message.content + turns.text_after(s, p.turn_id, through)
                if rebuilt != sent:
                    broken.append(f"stored {rebuilt!r}, sent {sent!r}")
                written.append(p.text)

    monkeypatch.setattr(writer, "_write_together", checked)
    fake_llm.script(Script.answer(Reply.text(" ".join(f"word{i}" for i in range(400))), delay=0.005))
    events = parse(alice.post("/api/chat/stream", json={"message": "long", "context": CONTEXT}).text)
    assert events[-1].event == "complete"
    answer = events[-1].data["payload"]["message"]
    assert not broken, broken[:3]
    assert len(written) >= 10, written  # many checkpoints while it streamed
    wholes = [len(text) for text in written if text is not None]
    assert sum(wholes) <= 4 * len(answer), (wholes, len(answer))
    assert len(wholes) < len(written)  # some checkpoints wrote only events
    with db.session() as s:
        stored = s.scalars(select(Message.content).where(Message.role == "assistant")).one()
    assert stored == answer


class _Streaming:
    """A running turn as the writer sees it: a new event every time it is asked."""

    def __init__(self, name: str) -> None:
        self.log = TurnLog(name)

    def progress(self) -> Progress:
        frame = Frame(id=len(self.log.frames) + 1, type="text_delta", data={"text": "x"})
        self.log.frames.append(frame)
        return Progress(self.log.turn_id, 0, [frame])


async def test_a_worker_writes_a_slice_of_its_turns_at_a_time(db: Database) -> None:
    """Ten running turns: each is saved every `every` seconds, but never all in one write. Written all at
    once, a hundred turns made one burst of 10-30 ms in a thread every half second, and the GETs that fell
    into it waited for the GIL; dealt into slices, each write holds a fifth of them."""
    every = 0.2
    writes: list[tuple[float, list[str]]] = []

    class Recording(ProgressWriter):
        def _write(self, batch: list[Progress]) -> set[str]:
            writes.append((time.monotonic(), [p.turn_id for p in batch]))
            return {p.turn_id for p in batch}

    writer = Recording(db, every=every)
    turns = [_Streaming(f"turn {i}") for i in range(10)]
    for turn in turns:
        writer.join(turn)
    await asyncio.sleep(every * 3.2)
    for turn in turns:
        await writer.leave(turn)

    assert writes and max(len(ids) for _, ids in writes) == 10 // SLICES
    for turn in turns:
        times = [at for at, ids in writes if turn.log.turn_id in ids]
        assert len(times) >= 2 and all(0.8 * every < b - a < 2 * every for a, b in pairwise(times))
        assert turn.log.saved == len(turn.log.frames) == len(times)  # each write's events are counted saved


class _Ending:
    """A running turn whose model is done: events logged since its last save, nothing new after them."""

    def __init__(self, name: str) -> None:
        self.log = TurnLog(name)

    def end(self) -> None:
        self.log.frames += [Frame(id=1, type="text_delta", data={"text": "x"}),
                            Frame(id=2, type="usage", data={"output_tokens": 1})]

    def progress(self) -> Progress | None:
        unsaved = self.log.unsaved()
        return Progress(self.log.turn_id, 0, unsaved) if unsaved else None


async def test_turns_read_elsewhere_write_their_last_events_together_before_they_leave(db: Database) -> None:
    """At its end a turn read on another instance has events no eager write took yet (`usage`, the context
    meter). `flush` writes them in the next eager batch, with the other turns ending then, and returns once
    they are stored; a turn nobody reads elsewhere leaves them to its final save. Left to the final saves,
    100 turns ending at once queued on the persist threads and their remote readers got those events
    ~0.5 s after the local ones (benchmarks/README.md)."""
    writes: list[list[str]] = []

    class Recording(ProgressWriter):
        def _write(self, batch: list[Progress]) -> set[str]:
            writes.append(sorted(p.turn_id for p in batch))
            return {p.turn_id for p in batch}

    writer = Recording(db, every=60.0)  # no checkpoint during the test: only eager writes
    read_elsewhere, also, alone = _Ending("read elsewhere"), _Ending("also"), _Ending("alone")
    for turn in (read_elsewhere, also, alone):
        writer.join(turn)
    writer.watch(["read elsewhere", "also"])
    for turn in (read_elsewhere, also, alone):
        turn.end()
    await asyncio.gather(writer.flush(read_elsewhere), writer.flush(also))
    assert writes == [["also", "read elsewhere"]]
    assert not read_elsewhere.log.unsaved() and not also.log.unsaved()

    await writer.flush(alone)
    assert len(writes) == 1 and len(alone.log.unsaved()) == 2
    for turn in (read_elsewhere, also, alone):
        await writer.leave(turn)


def test_many_turns_checkpoint_their_answers_in_one_batch(alice: TestClient, fake_llm: FakeAnthropic,
                                                          db: Database) -> None:
    """Several running turns whose answers are due in the same checkpoint are written together: each one's
    events, last event id and answer so far (one statement per kind for all of them)."""
    progress = [Progress(turn_id, message_id, [Frame(id=last + 1, type="text_delta", data={"text": "more"})],
                         f"so far {turn_id}", {})
                for turn_id, message_id, last in _running_again(alice, fake_llm, db, 3)]
    assert ProgressWriter(db)._write(progress) == {p.turn_id for p in progress}
    with db.session() as s:
        for p in progress:
            turn, message = s.get(ChatTurn, p.turn_id), s.get(Message, p.message_id)
            assert turn is not None and message is not None
            assert (turn.last_event_id, message.content) == (p.frames[0].id, f"so far {p.turn_id}")


def test_a_checkpoint_after_its_turn_was_forgotten_keeps_none_of_its_events(
        alice: TestClient, fake_llm: FakeAnthropic, db: Database) -> None:
    """A patient deleted while its turn runs: forget redacts the answer, ends the turn and drops its events;
    the worker's next checkpoint, already under way, must not store them again. The other turns of that
    checkpoint keep theirs, and a checkpoint of live turns only leaves them all."""
    from backend.conversations.forget import REDACTED_ANSWER, Redaction, drop_events, end_turns, redact_messages

    running = _running_again(alice, fake_llm, db, 3)
    forgotten = running[1]
    with db.session() as s:
        found = Redaction(answers={forgotten[1]}, turns={forgotten[0]})
        redact_messages(s, found)
        end_turns(s, found)
        drop_events(s, found)
    for round_ in (1, 2):
        progress = [Progress(turn_id, message_id, [Frame(id=last + round_, type="text_delta",
                                                         data={"text": f"quote {round_}"})], f"quote {round_}", {})
                    for turn_id, message_id, last in running]
        ProgressWriter(db)._write(progress)
        with db.session() as s:
            for turn_id, message_id, last in running:
                seqs = list(s.scalars(select(TurnEvent.seq).where(TurnEvent.turn_id == turn_id)))
                content = s.scalar(select(Message.content).where(Message.id == message_id))
                if turn_id == forgotten[0]:
                    assert seqs == [] and content == REDACTED_ANSWER
                else:
                    assert seqs[-1] == last + round_ and content == f"quote {round_}"
        running = [r for r in running if r is not forgotten] if round_ == 1 else running


def _running_again(client: TestClient, fake_llm: FakeAnthropic, db: Database, n: int) -> list[tuple[str, int, int]]:
    """`n` turns answered, then marked running again as if still answering: (turn id, its answer's
    message id, its last event id) each."""
    fake_llm.script(*(Script.text(f"Answer {i}.") for i in range(n)))
    turn_ids = [parse(client.post("/api/chat/stream", json={"message": f"m{i}", "context": CONTEXT}).text)[0]
                .data["turn_id"] for i in range(n)]
    found = []
    with db.session() as s:
        for turn_id in turn_ids:
            turn = s.get(ChatTurn, turn_id)
            assert turn is not None and turn.assistant_message_id is not None
            message = s.get(Message, turn.assistant_message_id)
            assert message is not None
            turn.status, message.status = "running", "running"
            found.append((turn_id, turn.assistant_message_id, turn.last_event_id))
    return found
