"""Clipping text to a budget: the one truncation rule for titles, tool results and labels; and what makes a
spreadsheet cell run as a formula."""

from __future__ import annotations

# A cell starting with one of these is a formula (or becomes one) in Excel, LibreOffice or Sheets.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")


def looks_like_formula(text: str) -> bool:
    return text.lstrip(" ").startswith(FORMULA_START)


def clip(text: str | None, limit: int, *, note: str = "…", squash: bool = False) -> str:
    """At most `limit` characters of `text`, then `note` if anything was cut (`{rest}` in the note is the
    number of characters left out). `squash` first collapses runs of whitespace to one space."""
    text = " ".join((text or "").split()) if squash else (text or "")
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + note.format(rest=len(text) - limit)
