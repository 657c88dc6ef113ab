"""Rebuild the Messages API history from stored messages, and trim it without splitting tool pairs.

The history is a prompt prefix that only grows, so each turn reads the previous one from the cache:
stored assistant messages keep the exact API blocks of their turn (`extras.blocks`), and user messages
the exact content they were sent with (`extras.sent_content`: what the user decided about the previous
answer's cards, the page context of that turn, the question). Trimming cuts in steps, so between two
cuts the prefix is byte for byte the same from turn to turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from backend.agent.schemas import Card, MessageExtras
from backend.text import clip

TRIM_THRESHOLD = 40  # API messages; above this the oldest are dropped…
TRIM_KEEP = 24  # …keeping at least this many…
TRIM_STEP = 16  # …with the cut moving in steps this long, so the prefix is stable between cuts
BRIDGE_NOTE = "[Earlier conversation trimmed to save context.]"
BRIDGE_ACK = "Understood."


def decision_note(cards: Sequence[Card]) -> str | None:
    decided = [c for c in cards if c.decision]
    if not decided:
        return None
    lines = [f"- {c.type} card ({_card_label(c)}): {c.decision}" for c in decided]
    return "[Card decisions on your previous answer]\n" + "\n".join(lines)


def _card_label(card: Card) -> str:
    data = card.data if isinstance(card.data, dict) else {}
    for key in ("name", "query", "condition", "nct_id", "title"):
        if isinstance(data.get(key), str) and data[key]:
            return clip(data[key], 79)
    return card.id


def _is_tool_results(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)


def _as_blocks(content: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def build_history(rows: Sequence[Any], new_user_text: str | None = None,
                  page_context: str | None = None, *, compact: bool = True) -> list[dict[str, Any]]:
    """`rows`: stored messages (role, content, extras), oldest first. Returns alternating API messages
    ending with the new user message when `new_user_text` is given: the note on card decisions, this
    turn's `page_context` and the text (store `messages[-1]["content"]` to replay it exactly). With
    `compact` off (the conversation's setting) the whole history goes, however long."""
    messages: list[dict[str, Any]] = []
    note: str | None = None

    def add(message: dict[str, Any]) -> None:
        if messages and messages[-1]["role"] == message["role"]:
            # Two user messages in a row (a turn that died before saving an answer): merge them, keeping
            # any tool_result blocks first as the API requires.
            merged = _as_blocks(messages[-1]["content"]) + _as_blocks(message["content"])
            merged.sort(key=lambda b: b.get("type") != "tool_result")
            messages[-1] = {"role": message["role"], "content": merged}
        else:
            messages.append(message)

    def user(text: str, context: str | None = None) -> None:
        nonlocal note
        content = [{"type": "text", "text": note}] if note else []
        if context:
            content.append({"type": "text", "text": context})
        content.append({"type": "text", "text": text or "(empty message)"})
        note = None
        add({"role": "user", "content": content})

    for row in rows:
        if row.role == "user":
            sent = MessageExtras.model_validate(row.extras or {}).sent_content
            if sent:
                note = None  # the stored content already says what was decided
                add({"role": "user", "content": sent})
            else:
                user(row.content)
            continue
        extras = MessageExtras.model_validate(row.extras or {})
        blocks = extras.blocks or [
            {"role": "assistant", "content": [{"type": "text", "text": row.content or "(no answer)"}]}]
        if not messages:
            continue  # an assistant message can't open the history
        for block in blocks:
            add(block)
        note = decision_note(extras.payloads)
    if new_user_text is not None:
        user(new_user_text, page_context)
    return trim(messages) if compact else messages


def trim(messages: list[dict[str, Any]], threshold: int = TRIM_THRESHOLD, keep: int = TRIM_KEEP,
         step: int = TRIM_STEP) -> list[dict[str, Any]]:
    """Once there are more than `threshold` messages, drop the oldest in multiples of `step`, keeping at
    least `keep`: the cut stays put for several turns, so the cached prefix survives them. The cut never
    lands on a tool_result message (its tool_use would be dropped), and a bridge note says what happened."""
    if len(messages) <= threshold:
        return messages
    cut = (len(messages) - keep) // step * step
    if cut <= 0:
        return messages
    while cut < len(messages) - 1 and _is_tool_results(messages[cut]):
        cut += 1
    kept = messages[cut:]
    bridge = {"role": "user", "content": [{"type": "text", "text": BRIDGE_NOTE}]}
    if kept[0]["role"] == "user":
        return [bridge, {"role": "assistant", "content": [{"type": "text", "text": BRIDGE_ACK}]}, *kept]
    return [bridge, *kept]
