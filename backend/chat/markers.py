"""Payload markers in the model's text: `MARKER: {json}` (or a JSON array), optionally fenced.

One scanner serves both uses so they can never disagree:
- `MarkerFilter` sits on the stream of text deltas and holds text back as soon as a marker *may* be
  starting, so no `text_delta` ever shows marker JSON;
- `extract()` parses the finished text: each marker's JSON is validated against its payload schema;
  the marker text is removed from the message whether or not the payload was valid.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import jsonschema

SUGGESTED_VALUES = "SUGGESTED_VALUES:"
SUGGESTED_ACTIONS = "SUGGESTED_ACTIONS:"

SUGGESTION_SCHEMAS: dict[str, dict[str, Any]] = {
    SUGGESTED_VALUES: {"type": "array", "maxItems": 8, "items": {
        "type": "object", "required": ["label", "value"], "properties": {
            "label": {"type": "string", "minLength": 1, "maxLength": 80},
            "value": {"type": "string", "minLength": 1, "maxLength": 2000}}}},
    SUGGESTED_ACTIONS: {"type": "array", "maxItems": 6, "items": {
        "type": "object", "required": ["label", "action", "handler"], "properties": {
            "label": {"type": "string", "minLength": 1, "maxLength": 80},
            "action": {"type": "string", "minLength": 1, "maxLength": 100},
            "handler": {"enum": ["client", "server"]},
            "data": {"type": "object"}}}},
}

_FENCE_BEFORE = re.compile(r"```[a-zA-Z]*[ \t]*\n[ \t]*$")
_FENCE_TAIL = re.compile(r"[ \t]*(`{1,2}|```[a-zA-Z]*)")
_FENCE_OPEN = re.compile(r"[ \t]*\n?[ \t]*```[a-zA-Z]*[ \t]*\n?")


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    marker: str
    raw_json: str | None  # None: the marker was not followed by JSON, or it never closed


@dataclass
class Scan:
    spans: list[Span]
    safe_upto: int  # streaming may show text up to here (outside spans)


def _match_json(text: str, start: int) -> int | None:
    """Index just past the JSON value (object or array) starting at `start`, or None if it never closes."""
    depth = 0
    in_string = False
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _find_marker(text: str, markers: Iterable[str], pos: int) -> tuple[int, str] | None:
    best: tuple[int, str] | None = None
    for marker in markers:
        i = text.find(marker, pos)
        while i != -1 and i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"):
            i = text.find(marker, i + 1)
        if i != -1 and (best is None or i < best[0]):
            best = (i, marker)
    return best


def _held_suffix(text: str, markers: Iterable[str]) -> int:
    """Length of the longest tail of `text` that could still grow into a marker (or a fence before one)."""
    longest = 0
    for marker in markers:
        for n in range(min(len(marker) - 1, len(text)), 0, -1):
            if marker.startswith(text[-n:]):
                longest = max(longest, n)
                break
    last_line = text[text.rfind("\n") + 1:]
    if _FENCE_TAIL.fullmatch(last_line):
        longest = max(longest, len(last_line))
    # A fence line right before a (possible) marker belongs to it: hold it back too.
    fence = _FENCE_BEFORE.search(text, 0, len(text) - longest)
    if fence and fence.end() == len(text) - longest:
        longest = len(text) - fence.start()
    return longest


def scan(text: str, markers: Iterable[str], final: bool) -> Scan:
    markers = list(markers)
    spans: list[Span] = []
    pos = 0
    while True:
        found = _find_marker(text, markers, pos)
        if found is None:
            safe = len(text) if final else len(text) - _held_suffix(text, markers)
            return Scan(spans, max(safe, pos))
        at, marker = found
        start = at
        fence = _FENCE_BEFORE.search(text, 0, at)
        fenced = bool(fence and fence.end() == at)
        if fenced and fence is not None:
            start = fence.start()
        i = at + len(marker)
        opened = _FENCE_OPEN.match(text, i)
        if opened and "```" in opened.group(0):
            fenced, i = True, opened.end()
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        if i >= len(text):
            if final:
                spans.append(Span(start, len(text), marker, None))
                return Scan(spans, len(text))
            return Scan(spans, start)
        if text[i] not in "{[":
            # Not followed by JSON: drop the marker's line so no half-card text is shown.
            end = text.find("\n", i)
            end = len(text) if end == -1 else end
            spans.append(Span(start, end, marker, None))
            pos = end
            continue
        closed = _match_json(text, i)
        if closed is None:
            if final:
                spans.append(Span(start, len(text), marker, None))
                return Scan(spans, len(text))
            return Scan(spans, start)
        end = closed
        raw = text[i:end]
        if fenced:
            close = re.compile(r"[ \t]*\n?[ \t]*```").match(text, end)
            if close:
                end = close.end()
            elif not final and "```".startswith(text[end:].strip()[:3]) and len(text[end:].strip()) < 3:
                return Scan(spans, start)  # the closing fence may still be coming
        spans.append(Span(start, end, marker, raw))
        pos = end


def strip_spans(text: str, spans: list[Span], upto: int | None = None) -> str:
    upto = len(text) if upto is None else upto
    out, pos = [], 0
    for span in spans:
        if span.start >= upto:
            break
        out.append(text[pos:span.start])
        pos = span.end
    if pos < upto:
        out.append(text[pos:upto])
    return "".join(out)


class MarkerFilter:
    """Feed raw deltas, get back only text that is certainly not part of a marker."""

    def __init__(self, markers: Iterable[str]) -> None:
        self.markers = list(markers)
        self.raw = ""
        self.shown = 0  # length of visible text already released

    def feed(self, delta: str) -> str:
        self.raw += delta
        result = scan(self.raw, self.markers, final=False)
        visible = strip_spans(self.raw, result.spans, result.safe_upto)
        out = visible[self.shown:]
        self.shown = max(self.shown, len(visible))
        return out

    def flush(self) -> str:
        """At the end of a message: release held text that turned out not to be a marker."""
        result = scan(self.raw, self.markers, final=True)
        visible = strip_spans(self.raw, result.spans)
        out = visible[self.shown:]
        self.shown = max(self.shown, len(visible))
        return out


@dataclass
class Extraction:
    message: str
    payloads: list[dict[str, Any]] = field(default_factory=list)  # [{type, data}]
    suggested_values: list[dict[str, Any]] = field(default_factory=list)
    suggested_actions: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def extract(text: str, payload_types: Iterable[Any]) -> Extraction:
    """Parse the finished text. `payload_types` are the resolved LLM PayloadTypes (parse_marker, schema)."""
    by_marker = {p.parse_marker: p for p in payload_types if p.parse_marker}
    markers = [*by_marker, SUGGESTED_VALUES, SUGGESTED_ACTIONS]
    result = scan(text, markers, final=True)
    message = re.sub(r"\n{3,}", "\n\n", strip_spans(text, result.spans)).strip()
    out = Extraction(message=message)
    for span in result.spans:
        name = by_marker[span.marker].name if span.marker in by_marker else span.marker.rstrip(":").lower()
        if span.raw_json is None:
            out.errors.append(f"{name}: the marker was not followed by complete JSON")
            continue
        try:
            data = json.loads(span.raw_json)
        except json.JSONDecodeError as err:
            out.errors.append(f"{name}: invalid JSON ({err.msg} at position {err.pos})")
            continue
        schema = by_marker[span.marker].schema if span.marker in by_marker else SUGGESTION_SCHEMAS[span.marker]
        try:
            jsonschema.validate(data, schema)
        except jsonschema.ValidationError as err:
            where = "/".join(str(p) for p in err.absolute_path) or "payload"
            out.errors.append(f"{name}: does not match its schema at {where}: {err.message}")
            continue
        if span.marker == SUGGESTED_VALUES:
            out.suggested_values.extend(data)
        elif span.marker == SUGGESTED_ACTIONS:
            out.suggested_actions.extend(data)
        else:
            out.payloads.append({"type": name, "data": data})
    return out
