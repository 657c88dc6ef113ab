"""One message to the demo model as the chat sends it: the page's resolved prompt and tools, the page context
beside the question. Offline and in-process (no server, no SDK): for tests of what the demo model reads."""

from __future__ import annotations

import re
from typing import Any

from backend.chat.prompt import build_system_prompt, stage_items
from backend.demo.brain import answer
from backend.registry import REGISTRY
from backend.registry.builtins import load_builtins
from backend.registry.store import resolve


def demo_turn(context: dict[str, Any], message: str) -> tuple[str, list[str]]:
    """(the answer's text, the names of the tools it called)."""
    load_builtins()  # idempotent: the registry the app declares, frozen once
    resolved = resolve(context["current_page"], context=context)
    shown, _ = stage_items(context, resolved.page.staged_keys if resolved.page else ())
    system = build_system_prompt(resolved, shown)
    content = [{"type": "text", "text": system.page_context}, {"type": "text", "text": message}]
    reply = answer({"model": "demo", "max_tokens": 4096, "system": system.blocks(),
                    "tools": [t.to_anthropic() for t in resolved.tools],
                    "messages": [{"role": "user", "content": content}]})
    text = "\n".join(b["text"] for b in reply.blocks if b["type"] == "text")
    return text, [b["name"] for b in reply.blocks if b["type"] == "tool_use"]


def cards(text: str) -> set[str]:
    """The payload types of the cards an answer's marker lines carry."""
    markers = {p.parse_marker: p.name for p in REGISTRY.payloads.values() if p.parse_marker}
    return {name for line in text.splitlines() for marker, name in markers.items() if line.startswith(marker)}


def prose(text: str) -> str:
    """The answer without its marker lines: what the user reads."""
    return re.sub(r"^[A-Z_]+: .*$", "", text, flags=re.M).strip()
