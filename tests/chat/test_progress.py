"""The batched progress saves of a worker's running turns (`ProgressWriter`), against a real database."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select
from starlette.testclient import TestClient

from backend.chat.log import Frame
from backend.chat.progress import Progress, ProgressWriter
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
    fake_llm.script(Script.text("One."), Script.text("Two."))
    turn_ids = [parse(alice.post("/api/chat/stream", json={"message": m, "context": CONTEXT}).text)[0]
                .data["turn_id"] for m in ("one", "two")]
    progress: list[Progress] = []
    with db.session() as s:
        for turn_id in turn_ids:
            turn = s.get(ChatTurn, turn_id)
            assert turn is not None and turn.assistant_message_id is not None
            message = s.get(Message, turn.assistant_message_id)
            assert message is not None
            turn.status, message.status = "running", "running"  # as if still answering
            frames = [Frame(id=turn.last_event_id + i, type="text_delta", data={"text": f"more {i}",
                                                                                "type": "text_delta"})
                      for i in (1, 2)]
            progress.append(Progress(turn_id, turn.assistant_message_id, frames, "so far", {"turn_id": turn_id}))
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
