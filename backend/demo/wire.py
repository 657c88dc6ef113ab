"""The Messages API streaming wire format, written out: a reply becomes the exact SSE frames Claude sends.

Shared by the demo model and the tests' scripted fake server, so the real SDK parses every byte.
See reference/anthropic-and-sse.md §A.2–A.3: every frame has an `event:` line, `message_start` comes
first, and the body ends after `message_stop`.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Reply:
    """One assistant message: text and tool_use blocks, a stop reason and usage numbers."""

    blocks: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = "end_turn"
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    @classmethod
    def text(cls, text: str, **kw: Any) -> Reply:
        return cls(blocks=[{"type": "text", "text": text}], **kw)

    @classmethod
    def tool(cls, name: str, tool_input: dict[str, Any], preface: str = "", **kw: Any) -> Reply:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": preface}] if preface else []
        blocks.append({"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}", "name": name,
                       "input": tool_input})
        return cls(blocks=blocks, stop_reason="tool_use", **kw)


def frame(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def chunk_text(text: str, words: int = 3) -> list[str]:
    """Split text into small pieces (a few words each) so a UI visibly streams it."""
    pieces = re.findall(r"\S+\s*|\s+", text)
    return ["".join(pieces[i:i + words]) for i in range(0, len(pieces), words)] or [""]


def message_start(model: str, reply: Reply, message_id: str | None = None) -> bytes:
    return frame("message_start", {"type": "message_start", "message": {
        "id": message_id or f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant",
        "model": model, "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": reply.input_tokens, "output_tokens": 1,
                  "cache_creation_input_tokens": reply.cache_creation_input_tokens,
                  "cache_read_input_tokens": reply.cache_read_input_tokens}}})


def block_frames(index: int, block: dict[str, Any], words: int = 3) -> Iterator[bytes]:
    if block["type"] == "text":
        yield frame("content_block_start", {"type": "content_block_start", "index": index,
                                            "content_block": {"type": "text", "text": ""}})
        for piece in chunk_text(block["text"], words):
            yield frame("content_block_delta", {"type": "content_block_delta", "index": index,
                                                "delta": {"type": "text_delta", "text": piece}})
    elif block["type"] != "tool_use":  # a block sent whole (e.g. `redacted_thinking`): start, then stop
        yield frame("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})
    else:
        yield frame("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
            "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}})
        raw = json.dumps(block["input"])
        for piece in ["", *[raw[i:i + 24] for i in range(0, len(raw), 24)]]:
            yield frame("content_block_delta", {"type": "content_block_delta", "index": index,
                                                "delta": {"type": "input_json_delta", "partial_json": piece}})
    yield frame("content_block_stop", {"type": "content_block_stop", "index": index})


def message_end(reply: Reply) -> Iterator[bytes]:
    yield frame("message_delta", {"type": "message_delta",
                                  "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                                  "usage": {"output_tokens": reply.output_tokens}})
    yield frame("message_stop", {"type": "message_stop"})


def reply_frames(model: str, reply: Reply, words: int = 3) -> Iterator[bytes]:
    yield message_start(model, reply)
    for index, block in enumerate(reply.blocks):
        yield from block_frames(index, block, words)
    yield from message_end(reply)


def error_body(error_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}}
