"""Event ids are never reused: a reader on the generating worker is never handed an id more than
`RESERVE` past what is stored, so a worker that goes on with the turn after a `kill -9` can number after
any id a reader holds (the database side is in test_liveness.py)."""

from __future__ import annotations

import asyncio

from backend.agent.schemas import TextDelta
from backend.chat.log import RESERVE, Frame, TurnLog


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
