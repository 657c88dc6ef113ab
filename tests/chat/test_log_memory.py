"""A running turn's log holds in memory only what its readers here still need: saved frames every reader
has passed are dropped, and a reader that asks for them (a resume, one that attached late) gets them from
the database, then the rest from memory, in order and each once."""

from __future__ import annotations

import asyncio

from backend.agent.schemas import TextDelta
from backend.chat.log import Frame, TurnLog


def logged(n: int) -> tuple[TurnLog, dict[int, Frame], list[int]]:
    """A log of `n` text frames whose saved ones are in `table`; `asked` records each read of it."""
    table: dict[int, Frame] = {}
    asked: list[int] = []

    async def stored(after: int) -> list[Frame]:
        asked.append(after)
        return [table[i] for i in sorted(table) if i > after][:2]  # a page at a time, as `stored_frames` reads

    log = TurnLog("t", stored=stored)
    for i in range(n):
        log.append(TextDelta(text=f"{i} "))
    return log, table, asked


def save(log: TurnLog, table: dict[int, Frame], through: int) -> None:
    table.update({f.id: f for f in log.unsaved() if f.id <= through})
    log.mark_saved(through)


async def read_all(log: TurnLog, after: int) -> list[int]:
    return [f.id async for f in log.follow(after)]


async def test_saved_frames_no_reader_needs_leave_memory_and_come_back_from_the_database() -> None:
    log, table, asked = logged(6)
    save(log, table, 4)
    assert [f.id for f in log.frames] == [5, 6]  # nobody reads here: the saved ones are gone
    log.append(TextDelta(text="6 "))
    log.finish()
    assert await read_all(log, 0) == [1, 2, 3, 4, 5, 6, 7]
    assert asked == [0, 2]  # two pages of stored frames, then memory
    assert await read_all(log, 5) == [6, 7]  # one past them reads memory only
    assert asked == [0, 2]


async def test_a_reader_keeps_the_frames_it_has_not_read() -> None:
    log, table, asked = logged(6)
    reader = log.follow(0)
    assert (await anext(reader)).id == 1
    save(log, table, 6)
    assert [f.id for f in log.frames] == [2, 3, 4, 5, 6]  # the reader is at 1
    rest = [(await anext(reader)).id for _ in range(5)]
    assert rest == [2, 3, 4, 5, 6] and asked == []  # all from memory
    save(log, table, 6)
    assert log.frames == []  # the reader has passed them all
    log.append(TextDelta(text="7 "))
    assert (await asyncio.wait_for(anext(reader), 1)).id == 7
    await reader.aclose()


async def test_a_log_without_a_store_keeps_every_frame() -> None:
    log = TurnLog("t")
    for i in range(3):
        log.append(TextDelta(text=f"{i} "))
    log.mark_saved(3)
    assert [f.id for f in log.frames] == [1, 2, 3]
