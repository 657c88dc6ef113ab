"""A small SSE parser (WHATWG rules) for reading the app's streamed responses in tests."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass
class Event:
    id: str | None
    event: str
    data: dict[str, Any]


def parse_lines(lines: Iterable[str]) -> Iterator[Event]:
    ev_id: str | None = None
    ev_type = "message"
    data: list[str] = []
    for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if data:
                yield Event(ev_id, ev_type, json.loads("\n".join(data)))
            ev_type, data = "message", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "id":
            ev_id = value
        elif name == "event":
            ev_type = value
        elif name == "data":
            data.append(value)
    if data:
        yield Event(ev_id, ev_type, json.loads("\n".join(data)))


def parse(body: str) -> list[Event]:
    return list(parse_lines(body.replace("\r\n", "\n").split("\n")))


def types(events: list[Event]) -> list[str]:
    """Event types with consecutive text_deltas folded into one, for readable sequence assertions."""
    out: list[str] = []
    for e in events:
        if e.event == "text_delta" and out and out[-1] == "text_delta":
            continue
        out.append(e.event)
    return out


def text_of(events: list[Event]) -> str:
    return "".join(e.data["text"] for e in events if e.event == "text_delta")


def assembled(held: str, events: list[Event]) -> str:
    """The answer's text as a client puts it together from `held` (what it had) and the events after: a
    `resync` voids what came after its `after` and restates the text."""
    text = held
    for e in events:
        if e.event == "resync":
            text = e.data["text"]
        elif e.event == "text_delta":
            text += e.data["text"]
    return text


def stream_acting_midway(client: Any, body: dict[str, Any], act: Callable[[int], None]) -> tuple[list[Event], int]:
    """POST /api/chat/stream with `body`, and once two text deltas have arrived run `act(conversation id)` while
    the turn goes on; the turn's events and its conversation id."""
    events: list[Event] = []
    conv_id = 0
    with client.stream("POST", "/api/chat/stream", json=body) as r:
        for event in parse_lines(r.iter_lines()):
            events.append(event)
            if event.event == "conversation":
                conv_id = event.data["conversation_id"]
            if event.event == "text_delta" and sum(e.event == "text_delta" for e in events) == 2:
                act(conv_id)
    return events, conv_id
