"""One message to the demo model as the chat sends it: the page's resolved prompt and tools, the page context
beside the question. Offline and in-process (no server, no SDK): for tests of what the demo model reads."""

from __future__ import annotations

from typing import Any

from backend.chat.prompt import build_system_prompt, stage_items
from backend.demo.brain import answer
from backend.registry.store import resolve


def demo_turn(context: dict[str, Any], message: str) -> tuple[str, list[str]]:
    """(the answer's text, the names of the tools it called)."""
    resolved = resolve(context["current_page"], context=context)
    shown, _ = stage_items(context, resolved.page.staged_keys if resolved.page else ())
    system = build_system_prompt(resolved, shown)
    content = [{"type": "text", "text": system.page_context}, {"type": "text", "text": message}]
    reply = answer({"model": "demo", "max_tokens": 4096, "system": system.blocks(),
                    "tools": [t.to_anthropic() for t in resolved.tools],
                    "messages": [{"role": "user", "content": content}]})
    text = "\n".join(b["text"] for b in reply.blocks if b["type"] == "text")
    return text, [b["name"] for b in reply.blocks if b["type"] == "tool_use"]
