"""Shared pieces of the Tablizer and TrialScout context builders (what the user sees, as text)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backend.text import clip


def short(value: Any, limit: int = 90) -> str:
    """Any page value as one line of at most `limit` characters."""
    return clip(str(value or ""), limit - 1, squash=True)


def ai_columns(context: Mapping[str, Any]) -> str:
    columns = context.get("ai_columns") or []
    if not columns:
        return "AI COLUMNS: none"
    lines = [f"AI COLUMNS: {len(columns)}"]
    for c in columns:
        line = f"- {c.get('name')} ({c.get('type', 'boolean')})"
        if c.get("criteria"):
            line += f": {short(c['criteria'], 160)}"
        if c.get("filter_active") or c.get("filter"):
            line += f" [filter ON: {c.get('filter') or 'yes only'}]"
        counts = c.get("counts")
        if isinstance(counts, Mapping) and counts:
            line += " counts " + ", ".join(f"{k}={v}" for k, v in counts.items())
        lines.append(line)
    return "\n".join(lines)


def view_state(context: Mapping[str, Any], id_key: str) -> list[str]:
    lines = []
    sort = context.get("sort") or {}
    if sort.get("field"):
        lines.append(f"- Sorted by: {sort['field']} {sort.get('direction', 'asc')}")
    pagination = context.get("pagination") or {}
    if pagination:
        lines.append(f"- Page: {pagination.get('page', 1)} ({pagination.get('page_size', '?')} per page)")
    selected = context.get(f"selected_{id_key}s") or []
    if selected:
        lines.append(f"- Selected: {', '.join(map(str, selected[:30]))}" + (" …" if len(selected) > 30 else ""))
    viewer = context.get("viewer") or {}
    if viewer.get(id_key):
        lines.append(f"- Detail view open: {viewer[id_key]}")
    return lines


def item_lines(items: list[Mapping[str, Any]], fmt: Any, staged: Mapping[str, int], key: str,
               noun: str) -> str:
    if not items:
        return f"LOADED {noun.upper()}: none loaded"
    total = staged.get(key, len(items))
    head = f"LOADED {noun.upper()} ({len(items)} of {total} listed):" if total > len(items) else \
        f"LOADED {noun.upper()} ({len(items)}):"
    return head + "\n" + "\n".join(fmt(i) for i in items)
