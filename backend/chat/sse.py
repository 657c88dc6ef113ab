"""The only code that knows Server-Sent Events: typed events in, `id`/`event`/`data` frames out."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from sse_starlette import EventSourceResponse, ServerSentEvent

HEARTBEAT_SECONDS = 10  # comment pings; the contract asks for at least one every 15 s


async def encode(events: AsyncIterator[Any]) -> AsyncIterator[ServerSentEvent]:
    n = 0
    async for event in events:
        n += 1
        yield ServerSentEvent(id=str(n), event=event.type,
                              data=json.dumps(event.to_data(), ensure_ascii=False, default=str))


def sse_response(events: AsyncIterator[Any]) -> EventSourceResponse:
    return EventSourceResponse(
        encode(events), ping=HEARTBEAT_SECONDS,
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
