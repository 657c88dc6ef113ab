"""What the user may see of the loop's events: text deltas with payload marker text held back."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

from backend.agent.schemas import AgentEvent, TextDelta, ToolCompleted, UsageUpdated
from backend.chat.markers import MarkerFilter


async def visible_events(events: AsyncIterable[Any], text_filter: MarkerFilter) -> AsyncIterator[AgentEvent]:
    """A pure transform: text deltas pass through the filter; text held at a model call's end (its
    usage) or a tool's end is released once it can no longer be a marker. The caller flushes the rest."""
    async for event in events:
        if isinstance(event, TextDelta):
            if visible := text_filter.feed(event.text):
                yield TextDelta(text=visible)
            continue
        if isinstance(event, UsageUpdated | ToolCompleted) and (rest := text_filter.flush()):
            yield TextDelta(text=rest)
        yield event
