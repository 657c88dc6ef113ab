"""Run an async iterator in a task of its own and read its items through a queue.

A tool call needs its producer apart from the consumer: the loop sends heartbeats while a slow tool is
silent. A source's exception reaches the consumer where it reads; a cancelled source simply ends. (A chat
turn needs no pump: its runner reads the loop in its own task, and Stop cancels a scope around it.)
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Generic, TypeVar

import anyio

T = TypeVar("T")
_DONE = object()


@dataclass(frozen=True)
class Idle:
    """Nothing arrived for `idle_after` seconds; `elapsed` counts from the pump's start."""

    elapsed: float


class Pump(Generic[T]):
    def __init__(self, source: AsyncIterator[T], *, idle_after: float | None = None) -> None:
        self._queue: asyncio.Queue[object] = asyncio.Queue()
        self._error: BaseException | None = None
        self._idle_after = idle_after
        self._started = time.monotonic()
        self.task = asyncio.create_task(self._run(source))

    async def _run(self, source: AsyncIterator[T]) -> None:
        try:
            async for item in source:
                self._queue.put_nowait(item)
        except Exception as exc:  # handed to the consumer, which decides what a failure means
            self._error = exc
        finally:
            self._queue.put_nowait(_DONE)

    def cancel(self) -> None:
        self.task.cancel()

    async def __aiter__(self) -> AsyncIterator[T | Idle]:
        while True:
            try:
                item = await asyncio.wait_for(self._queue.get(), self._idle_after)
            except TimeoutError:
                yield Idle(elapsed=time.monotonic() - self._started)
                continue
            if item is _DONE:
                if self._error is not None:
                    raise self._error
                return
            yield item  # type: ignore[misc]

    async def aclose(self) -> None:
        """Cancel the source if it still runs and wait until it has unwound (even while being cancelled)."""
        if not self.task.done():
            self.task.cancel()
        with anyio.CancelScope(shield=True):
            await asyncio.gather(self.task, return_exceptions=True)
