"""The stream's ids say exactly what a reader has. They are never reused: a reader on the generating
worker is never handed an id more than `RESERVE` past what is stored, so a worker that goes on with the
turn after a `kill -9` can number after any id a reader holds (the database side is in test_liveness.py).
And a resume names the turn its ids belong to."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from starlette.testclient import TestClient

from backend.agent.schemas import TextDelta
from backend.chat.log import RESERVE, Frame, TurnLog
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.fakes.fake_page import CONTEXT
from tests.sse import Event, parse


async def take(log: TurnLog, after: int, n: int, wait: float = 0.05) -> list[Frame]:
    """Up to `n` frames the reader gets within `wait` seconds of nothing new."""
    got: list[Frame] = []
    reader = log.follow(after)
    try:
        while len(got) < n:
            got.append(await asyncio.wait_for(anext(reader), wait))
    except TimeoutError:
        pass
    finally:
        await reader.aclose()
    return got


async def test_readers_wait_for_a_save_rather_than_run_more_than_reserve_ahead() -> None:
    log = TurnLog("t")
    for i in range(RESERVE + 5):
        log.append(TextDelta(text=f"{i} "))
    got = await take(log, 0, RESERVE + 5)
    assert [f.id for f in got] == list(range(1, RESERVE + 1))  # held back: nothing is stored yet
    log.mark_saved(5)
    got = await take(log, RESERVE, 10)
    assert [f.id for f in got] == list(range(RESERVE + 1, RESERVE + 6))


async def test_a_log_that_goes_on_numbers_after_the_floor_and_replays_the_stored() -> None:
    stored = [Frame(i, "text_delta", {"text": f"{i} "}) for i in range(1, 4)]
    log = TurnLog("t")
    log.go_on_from(stored, floor=3 + RESERVE)
    frame = log.append(TextDelta(text="more"))
    assert frame.id == 4 + RESERVE
    assert [f.id for f in await take(log, 0, 10)] == [1, 2, 3, 4 + RESERVE]
    assert [f.id for f in await take(log, 2, 10)] == [3, 4 + RESERVE]
    assert [f.id for f in await take(log, 10, 10)] == [4 + RESERVE]  # an id in the gap: what comes after it


def ask(client: TestClient, message: str, conversation_id: int | None = None) -> list[Event]:
    body: dict[str, Any] = {"message": message, "context": CONTEXT}
    if conversation_id is not None:
        body["conversation_id"] = conversation_id
    r = client.post("/api/chat/stream", json=body)
    assert r.status_code == 200, r.text
    return parse(r.text)


@pytest.mark.usefixtures("test_registry")
def test_a_resume_names_its_turn_and_never_reads_a_newer_one_from_its_middle(
        alice: TestClient, bob: TestClient, fake_llm: FakeAnthropic) -> None:
    """A client read turn 1 up to event 2; meanwhile turn 2 ran (another tab). Resuming with turn 1's id
    it gets the rest of turn 1 and its end, not turn 2 from event 3 on; a turn that isn't the
    conversation's (or isn't the user's) is a 404."""
    fake_llm.script(Script.text("The first answer, in a few words."), Script.text("A second answer, quite unlike it."))
    first = ask(alice, "one")
    cid, turn_1 = first[0].data["conversation_id"], first[0].data["turn_id"]
    second = ask(alice, "two", cid)
    turn_2 = second[0].data["turn_id"]
    assert turn_2 != turn_1

    url = f"/api/conversations/{cid}/stream"
    rest = parse(alice.get(url, params={"turn_id": turn_1}, headers={"Last-Event-ID": "2"}).text)
    assert [(e.id, e.event, e.data) for e in rest] == [(e.id, e.event, e.data) for e in first[2:]]
    assert rest[-1].event == "complete" and rest[-1].data["payload"]["message"] == "The first answer, in a few words."
    latest = parse(alice.get(url, params={"turn_id": turn_2}, headers={"Last-Event-ID": "2"}).text)
    assert [(e.id, e.data) for e in latest] == [(e.id, e.data) for e in second[2:]]
    unnamed = parse(alice.get(url, headers={"Last-Event-ID": "2"}).text)  # as before: the latest turn
    assert [(e.id, e.data) for e in unnamed] == [(e.id, e.data) for e in second[2:]]

    assert alice.get(url, params={"turn_id": "0" * 32}).status_code == 404
    fake_llm.script(Script.text("Bob's."))
    bobs = ask(bob, "mine")
    assert alice.get(url, params={"turn_id": bobs[0].data["turn_id"]}).status_code == 404  # not this conversation's
    assert bob.get(url, params={"turn_id": turn_1}).status_code == 404  # not bob's conversation
