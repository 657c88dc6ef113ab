"""Text deltas that come faster than a window go out as one `text_delta` frame: adaptive coalescing.

It sits where a turn's events are numbered (`TurnRunner._append`, before the log), not at the SSE writer:
fewer frames is fewer ids, stored rows, SSE writes and wake-ups of every reader, and a reader on this
worker, one on another instance (the stored events, `chat/fanout.py`) and one resuming with
Last-Event-ID all read the same frames, so the text they put together is the same. A delta that comes
at least the window after the last text frame goes out at once (the first of a turn, and a lone one, are
never delayed); one that comes sooner waits until the window after that frame, with any that join it.
Whatever else the turn logs, its end and Stop flush the waiting text first (`flush`), so order holds.

The window follows the worker's load: `window` times `load()`, 0 to 1 (`Supervisor.load`: the turns
running beside this one against COLLEAGUE_COALESCE_BUSY_TURNS). A turn alone sends every delta as it
comes, where a frame costs no one a wait; on a busy worker they are held up to the whole window, where
each frame saved is event-loop time the other streams and requests wait for (benchmarks/README.md).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable

from backend.agent.schemas import TextDelta


class Coalescer:
    def __init__(self, window: float, emit: Callable[[TextDelta], None],
                 load: Callable[[], float] | None = None) -> None:
        self.window = window  # seconds at full load; 0 sends every delta as it comes
        self.emit = emit
        self.load = load  # 0 (idle) to 1 (busy): the share of `window` that applies now (None: all of it)
        self._pending: list[str] = []
        self._sent_at = -math.inf  # the loop's time of the last text frame
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None

    def add(self, delta: TextDelta) -> None:
        if self._pending:
            self._pending.append(delta.text)
            return
        loop = self._loop = self._loop or asyncio.get_running_loop()
        now = loop.time()
        window = self.window * self.load() if self.load else self.window
        if now - self._sent_at >= window:
            self._sent_at = now
            self.emit(delta)
            return
        self._pending.append(delta.text)
        self._timer = loop.call_at(self._sent_at + window, self.flush)

    def flush(self) -> None:
        """Send the waiting text now (before another event, at the end, on Stop)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._pending:
            text, self._pending = "".join(self._pending), []
            assert self._loop is not None  # text waits only after `add` saw the loop
            self._sent_at = self._loop.time()
            self.emit(TextDelta(text=text))
