"""Payload markers in the model's text: `MARKER: {json}` (or a JSON array), optionally fenced.

One scanner serves both uses so they can never disagree:
- `MarkerFilter` sits on the stream of text deltas and holds text back as soon as a marker *may* be
  starting, so no `text_delta` ever shows marker JSON;
- `extract()` (in `chat/extract.py`) parses the finished text with the same scanner.

The scanner is incremental: it keeps its place (the bracket matcher's depth and string state, the
unsettled tail) between deltas, so streaming a card costs time linear in its length. Cards are bounded
while they are matched, before `json.loads` sees them: deeper than `MAX_DEPTH` or larger than
`MAX_MARKER_BYTES`, a marker is dropped like invalid JSON (its error in `payload_errors`, the prose
around it kept). Matching goes on past a limit (a counter, no recursion) only to find where the card ends.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from backend.payloads.suggestions import ACTION_DATA_SCHEMA as ACTION_DATA_SCHEMA  # re-exported for chat/actions

SUGGESTED_VALUES = "SUGGESTED_VALUES:"
SUGGESTED_ACTIONS = "SUGGESTED_ACTIONS:"

MAX_DEPTH = 32  # nesting levels of one card's JSON (the outer object is level 1)
MAX_MARKER_BYTES = 64 * 1024  # one card's JSON, UTF-8


_INDENT = re.compile(r"[ \t]*")
_FENCE_LINE_END = re.compile(r"```[a-zA-Z]*[ \t]*\Z")  # searched with endpos = the line's end
_FENCE_TAIL = re.compile(r"```[a-zA-Z]*[ \t]*\Z|`{1,2}\Z")  # a fence that may be opening
_FENCE_OPEN = re.compile(r"[ \t]*\n?[ \t]*```[a-zA-Z]*[ \t]*\n?")
_FENCE_CLOSE = re.compile(r"[ \t]*\n?[ \t]*```")
_OPENING_TICKS = re.compile(r"`{1,2}")
_CLOSING_SOON = re.compile(r"\s*`{0,2}\s*\Z")
_IN_STRING = re.compile(r'["\\]')
_STRUCTURE = re.compile(r'"|[{\[]+|[}\]]+')  # runs of brackets at once: "[[[[" is one step

# Scanner phases: prose, then per marker: after the marker word, inside its JSON, waiting for the
# closing fence of a fenced card, or the rest of a marker line that held no JSON.
_PROSE, _MARKER, _JSON, _FENCE, _LINE = range(5)


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    marker: str
    raw_json: str | None  # None: no complete JSON followed the marker, or it broke a limit
    problem: str | None = None  # why a complete card was refused before parsing


def _fence_before(text: str, end: int) -> int | None:
    """Start of a fence line (```` ```lang ````, newline, indent) that ends exactly at `end`, if any.
    Only the two lines before `end` are read, so the cost does not grow with the text."""
    if not end or text[end - 1] not in " \t\n":
        return None
    eol = text.rfind("\n", 0, end)
    if eol == -1 or not _INDENT.fullmatch(text, eol + 1, end):
        return None
    fence = _FENCE_LINE_END.search(text, text.rfind("\n", 0, eol) + 1, eol)
    return fence.start() if fence else None


class _Brackets:
    """The bracket matcher, resumable: depth and string state survive between pieces of text."""

    def __init__(self) -> None:
        self.depth = self.deepest = self.size = 0
        self.in_string = self.escaped = False
        self.parts: list[str] | None = []  # the JSON so far; None once it is too large to keep

    def feed(self, text: str, start: int) -> int | None:
        """Index in `text` just past the closing bracket, or None if the value goes on."""
        i, n = start, len(text)
        while i < n:
            if self.escaped:
                self.escaped, i = False, i + 1
            elif self.in_string:
                m = _IN_STRING.search(text, i)
                if m is None:
                    break
                i = m.end()
                if m.group() == '"':
                    self.in_string = False
                else:
                    self.escaped = True  # the next character, maybe in the next piece, is escaped
            else:
                m = _STRUCTURE.search(text, i)
                if m is None:
                    break
                i, run = m.end(), len(m.group())
                if m.group() == '"':
                    self.in_string = True
                elif m.group()[0] in "{[":
                    self.depth += run
                    self.deepest = max(self.deepest, self.depth)
                elif run < self.depth:
                    self.depth -= run
                else:
                    i, self.depth = m.start() + self.depth, 0
                    self._keep(text[start:i])
                    return i
        self._keep(text[start:] if start else text)
        return None

    def _keep(self, piece: str) -> None:
        self.size += len(piece)
        if self.parts is not None:
            self.parts.append(piece)
            if self.size > MAX_MARKER_BYTES:
                self.parts = None  # the card is refused: only its end is still looked for

    def result(self) -> tuple[str | None, str | None]:
        """(raw JSON, None) for a card within the limits, else (None, the problem)."""
        if self.deepest > MAX_DEPTH:
            return None, f"the card is nested deeper than {MAX_DEPTH} levels"
        raw = "".join(self.parts) if self.parts is not None else None
        if raw is None or len(raw.encode("utf-8", "surrogatepass")) > MAX_MARKER_BYTES:
            return None, f"the card is larger than {MAX_MARKER_BYTES // 1024} KB"
        return raw, None


@functools.lru_cache(maxsize=64)
def _prefix_table(markers: tuple[str, ...]) -> tuple[frozenset[str], int, frozenset[str]]:
    """The markers' proper prefixes, the longest one's length and their last characters: the same few
    marker sets on every page, so one table each (not one per running turn)."""
    prefixes = frozenset(m[:n] for m in markers for n in range(1, len(m)))
    return prefixes, max(map(len, prefixes), default=0), frozenset(p[-1] for p in prefixes)


class MarkerFilter:
    """Feed raw deltas, get back only text that is certainly not part of a marker; `spans` says where
    the markers were (offsets from the first text fed).

    Only the unsettled tail is kept: a few characters that may grow into a marker (or the fence line
    before one), or the marker being read.
    """

    def __init__(self, markers: Iterable[str]) -> None:
        self._markers = list(markers)
        self._prefixes, self._longest, self._prefix_ends = _prefix_table(tuple(self._markers))
        self.spans: list[Span] = []
        self._buf = ""  # unsettled text, starting at offset `_pos`
        self._pos = 0
        self._before = ""  # the character before `_buf` (a marker must not continue a word)
        self._phase = _PROSE
        self._i = 0  # where the current phase resumes in `_buf`
        self._start = 0  # the current marker's span start (absolute)
        self._marker = ""
        self._fenced = False
        self._brackets = _Brackets()
        self._raw: str | None = None
        self._problem: str | None = None
        self._out: list[str] = []

    def feed(self, text: str) -> str:
        self._buf += text
        self._run(end=False)
        return self._take()

    def flush(self) -> str:
        """At the end of a message: release held text that turned out not to be a marker. A marker
        still being read stays open (its JSON may go on in the next message); `finish` closes it."""
        self._run(end=True)
        return self._take()

    def finish(self) -> str:
        """No more text: an open marker runs to the end of the text and is dropped."""
        self._run(end=True)
        if self._phase != _PROSE:
            self._span(self._pos + len(self._buf), None, None)
            self._settle(len(self._buf))
            self._phase = _PROSE
        return self._take()

    def _take(self) -> str:
        if not self._out:
            return ""
        out, self._out = "".join(self._out), []
        return out

    def _settle(self, n: int, show: bool = False) -> None:
        """The first `n` characters of the tail are decided: shown as text, or part of a span."""
        if n:
            if show:
                self._out.append(self._buf[:n])
            self._before = self._buf[n - 1]
            self._pos += n
            self._buf = self._buf[n:]
        self._i = 0

    def _span(self, end: int, raw: str | None, problem: str | None) -> None:
        self.spans.append(Span(self._start, end, self._marker, raw, problem))

    def _run(self, end: bool) -> None:
        while _STEPS[self._phase](self, end):
            pass

    def _prose(self, end: bool) -> bool:
        buf = self._buf
        found = self._find_marker(buf)
        if found is None:
            self._settle(len(buf) if end else self._held(buf), show=True)
            return False
        at, self._marker = found
        fence = _fence_before(buf, at)  # a fence line right before the marker belongs to its span
        start = at if fence is None else fence
        self._settle(start, show=True)
        self._phase, self._start = _MARKER, self._pos
        self._fenced, self._i = fence is not None, at - start + len(self._marker)
        return True

    def _find_marker(self, buf: str) -> tuple[int, str] | None:
        best: tuple[int, str] | None = None
        for marker in self._markers:
            i = buf.find(marker)
            while i != -1 and _in_word(buf[i - 1] if i else self._before):
                i = buf.find(marker, i + 1)
            if i != -1 and (best is None or i < best[0]):
                best = (i, marker)
        return best

    def _held(self, buf: str) -> int:
        """Where the tail that may still grow into a marker (or the fence before one) starts."""
        cut = len(buf)
        if buf and buf[-1] in self._prefix_ends:
            for n in range(min(self._longest, len(buf)), 0, -1):
                if buf[-n:] in self._prefixes:
                    cut -= n
                    break
        fence = _fence_before(buf, cut)
        tick = buf.rfind("`")  # a fence that may be opening ends in its last backtick, or after it
        tail = _FENCE_TAIL.search(buf, max(tick - 2, 0)) if tick != -1 else None
        return min(cut, len(buf) if fence is None else fence, tail.start() if tail else len(buf))

    def _after_marker(self, end: bool) -> bool:
        buf, i = self._buf, self._i
        opened = _FENCE_OPEN.match(buf, i)
        if opened:
            i = opened.end()
        while i < len(buf) and buf[i] in " \t\r\n":
            i += 1
        if i == len(buf):
            return False
        if buf[i] in "{[":
            self._phase, self._fenced, self._brackets = _JSON, self._fenced or bool(opened), _Brackets()
        else:
            if not opened and _OPENING_TICKS.fullmatch(buf, i):
                return False  # "``" may still become the fence that opens the card
            self._phase = _LINE  # not followed by JSON: drop the marker's line, no half-card text shown
        self._i = i
        return True

    def _json(self, end: bool) -> bool:
        closed = self._brackets.feed(self._buf, self._i)
        if closed is None:
            self._settle(len(self._buf))
            return False
        self._raw, self._problem = self._brackets.result()
        self._settle(closed)
        if self._fenced:
            self._phase = _FENCE
        else:
            self._span(self._pos, self._raw, self._problem)
            self._phase = _PROSE
        return True

    def _fence(self, end: bool) -> bool:
        close = _FENCE_CLOSE.match(self._buf)
        if close is None and not end and _CLOSING_SOON.match(self._buf):
            return False  # the closing fence may still be coming
        n = close.end() if close else 0
        self._span(self._pos + n, self._raw, self._problem)
        self._settle(n)
        self._phase = _PROSE
        return True

    def _line(self, end: bool) -> bool:
        eol = self._buf.find("\n", self._i)
        if eol == -1:
            self._settle(len(self._buf))
            return False
        self._span(self._pos + eol, None, None)
        self._settle(eol)
        self._phase = _PROSE
        return True


_STEPS = (MarkerFilter._prose, MarkerFilter._after_marker, MarkerFilter._json, MarkerFilter._fence,
          MarkerFilter._line)  # indexed by phase


def _in_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"
