"""What Claude's prompt cache would read and write for a request, so the fake reports it in `usage`.

The prompt is read as blocks in cache order (tools, system, then each message's content). A breakpoint
(`cache_control` on a block) writes the prefix up to it; a later request reads the longest prefix that
an earlier request wrote, found at or within `LOOKBACK` blocks before one of its own breakpoints (the
API's rule). `cache_control` itself is not part of what is compared. Tokens are estimated as 4 characters
each, the same estimate the fake uses for uncached input.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

LOOKBACK = 20


@dataclass(frozen=True)
class CacheUsage:
    input_tokens: int  # uncached
    cache_creation_input_tokens: int
    cache_read_input_tokens: int


def _blocks(body: dict[str, Any]) -> list[tuple[str, bool]]:
    """(canonical text, has a breakpoint) for each block of the request, in cache order."""
    out: list[tuple[str, bool]] = []

    def add(prefix: str, block: dict[str, Any]) -> None:
        plain = {k: v for k, v in block.items() if k != "cache_control"}
        out.append((prefix + json.dumps(plain, sort_keys=True, ensure_ascii=False), "cache_control" in block))

    for tool in body.get("tools") or []:
        add("tool:", tool)
    system = body.get("system") or []
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else system:
        add("system:", block)
    for message in body.get("messages") or []:
        content = message.get("content")
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            add(f"{message.get('role')}:", block)
    return out


@dataclass
class PromptCache:
    written: set[str] = field(default_factory=set)
    log: list[CacheUsage] = field(default_factory=list)  # one entry per request, in order

    def reset(self) -> None:
        self.written.clear()
        self.log.clear()

    def usage(self, body: dict[str, Any]) -> CacheUsage:
        blocks = _blocks(body)
        hashes: list[str] = []
        tokens: list[int] = []
        digest, total = hashlib.sha256(str(body.get("model")).encode()), 0
        for text, _ in blocks:
            digest.update(text.encode())
            hashes.append(digest.copy().hexdigest())
            total += max(1, len(text) // 4)
            tokens.append(total)
        breakpoints = [i for i, (_, marked) in enumerate(blocks) if marked]
        if not breakpoints:
            self.log.append(CacheUsage(input_tokens=total, cache_creation_input_tokens=0, cache_read_input_tokens=0))
            return self.log[-1]
        read_at = max((i for bp in breakpoints for i in range(max(0, bp - LOOKBACK), bp + 1)
                       if hashes[i] in self.written), default=-1)
        read = tokens[read_at] if read_at >= 0 else 0
        last = breakpoints[-1]
        created = max(0, tokens[last] - read)
        self.written.update(hashes[i] for i in breakpoints)
        self.log.append(CacheUsage(input_tokens=total - read - created, cache_creation_input_tokens=created,
                                   cache_read_input_tokens=read))
        return self.log[-1]
