"""Clipping text to a budget: the one truncation rule for titles, tool results and labels."""

from __future__ import annotations


def clip(text: str | None, limit: int, *, note: str = "…", squash: bool = False) -> str:
    """At most `limit` characters of `text`, then `note` if anything was cut (`{rest}` in the note is the
    number of characters left out). `squash` first collapses runs of whitespace to one space."""
    text = " ".join((text or "").split()) if squash else (text or "")
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + note.format(rest=len(text) - limit)
