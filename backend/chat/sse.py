"""The only code that knows Server-Sent Events: a turn's logged frames in, `id`/`event`/`data` out.

The frame ids are the turn log's, so a client that resumes with `Last-Event-ID` continues the same
numbering. A client that stops reading is dropped after `SEND_TIMEOUT` (the answer goes on and is
saved regardless). When the server shuts down, each stream ends with a `reconnect` event.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import cast

import anyio
from sse_starlette import EventSourceResponse, ServerSentEvent

from backend.agent.schemas import Reconnect, WireEvent
from backend.chat.log import Closing, Frame

HEARTBEAT_SECONDS = 10  # comment pings; the contract asks for at least one every 15 s
SEND_TIMEOUT = 30.0  # seconds a single write may block before the client counts as gone
RECONNECT_MS = 1000


async def encode(frames: AsyncIterator[Frame]) -> AsyncIterator[bytes | ServerSentEvent]:
    try:
        async for frame in frames:
            yield encode_frame(frame)
    except Closing:
        farewell = Reconnect(message="The server is restarting; the answer continues shortly.",
                             retry_ms=RECONNECT_MS)
        yield ServerSentEvent(event=farewell.type, data=json.dumps(farewell.to_data()), retry=RECONNECT_MS)


class _OnShutdown:
    """sse-starlette's `shutdown_event`, which it sets on every open response when the server shuts down,
    as a call: setting it runs `on_shutdown` (which wakes this worker's readers to end with `reconnect`).
    An `anyio.Event` would need a task per response waiting on it, all through the stream."""

    def __init__(self, on_shutdown: Callable[[], None]) -> None:
        self.set = on_shutdown  # the one method sse-starlette calls on it


def encode_frame(frame: Frame) -> bytes:
    """One frame's SSE bytes, written directly: what `ServerSentEvent(id=, event=, data=).encode()` gives
    (JSON has no line breaks, so `data` is one line), for a third of its cost on the per-delta path."""
    if frame.type == "text_delta":
        data = '{"text": ' + json.dumps(frame.data["text"], ensure_ascii=False) + ', "type": "text_delta"}'
    else:
        data = json.dumps(frame.data, ensure_ascii=False, default=str)
    return f"id: {frame.id}\r\nevent: {frame.type}\r\ndata: {data}\r\n\r\n".encode()


async def _numbered(events: AsyncIterator[WireEvent]) -> AsyncIterator[Frame]:
    n = 0
    async for event in events:
        n += 1
        yield Frame(id=n, type=event.type, data=event.to_data())


def events_response(events: AsyncIterator[WireEvent]) -> EventSourceResponse:
    """A stream that lives only as long as its request (an AI column run): events numbered 1, 2, 3…"""
    return sse_response(_numbered(events))


def sse_response(frames: AsyncIterator[Frame], on_shutdown: Callable[[], None] = lambda: None
                 ) -> EventSourceResponse:
    return EventSourceResponse(
        encode(frames), ping=HEARTBEAT_SECONDS, send_timeout=SEND_TIMEOUT,
        shutdown_event=cast(anyio.Event, _OnShutdown(on_shutdown)), shutdown_grace_period=2.0,
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
