"""What the user may see of the loop's events: text deltas with payload marker text held back."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from backend.agent.schemas import AgentEvent, TextDelta, ToolCompleted, UsageUpdated
from backend.chat.markers import MarkerFilter


async def visible_events(events: AsyncGenerator[Any, None],
                         text_filter: MarkerFilter) -> AsyncGenerator[AgentEvent, None]:
    """A pure transform: text deltas pass through the filter; text held at a model call's end (its
    usage) or a tool's end is released once it can no longer be a marker. The caller flushes the rest.
    Closing it closes `events` (the agent loop, and with it the model stream)."""
    async with aclosing(events):
        async for event in events:
            if isinstance(event, TextDelta):
                if visible := text_filter.feed(event.text):
                    yield event if visible == event.text else TextDelta(text=visible)
                continue
            if isinstance(event, UsageUpdated | ToolCompleted) and (rest := text_filter.flush()):
                yield TextDelta(text=rest)
            yield event
