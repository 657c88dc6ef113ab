"""The page context budget: how much of the system prompt a page's `context_builder` may fill.

A request's context is the page's data, and its size is the client's choice; the prompt's is ours. So
every builder fits its text into `budget_chars()` (the `COLLEAGUE_CONTEXT_TOKEN_BUDGET` setting at
about 4 characters a token, set once at start-up like the registries), and says what it left out:
a long field is clipped with the number of characters cut, a long list stops with the number of
entries not shown, and `fit` is the last guard over the whole text.
"""

from __future__ import annotations

from collections.abc import Iterable

from backend.text import clip as clip_text

CHARS_PER_TOKEN = 4
DEFAULT_CONTEXT_TOKENS = 8_000

_tokens = DEFAULT_CONTEXT_TOKENS


def set_context_budget(tokens: int) -> None:
    global _tokens
    _tokens = tokens


def budget_chars() -> int:
    return _tokens * CHARS_PER_TOKEN


def clip(value: object, limit: int) -> str:
    """The text, or its first `limit` characters and a note of how many more there were."""
    return clip_text(str(value if value is not None else ""), limit, note="… [{rest:,} more characters not shown]")


def fit_lines(lines: Iterable[str], limit: int, total: int, more: str) -> tuple[list[str], int]:
    """As many of `lines` as fit in `limit` characters, then `more` (formatted with `n`, how many of
    `total` entries were not shown); and how many were shown."""
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > limit:
            break
        kept.append(line)
        used += len(line) + 1
    shown = len(kept)
    if shown < total:
        kept.append(more.format(n=f"{total - shown:,}"))
    return kept, shown


def fit(lines: Iterable[str], limit: int | None = None) -> str:
    """The page context as one text of at most `limit` characters (the budget by default), cut at a
    line when it must be, with a note."""
    limit = budget_chars() if limit is None else limit
    text = "\n".join(lines)
    if len(text) <= limit:
        return text
    note = "\n[… {n:,} more characters of page context not shown]"
    cut = text.rfind("\n", 0, limit - len(note) - 12)
    cut = cut if cut > 0 else limit - len(note) - 12
    return text[:cut] + note.format(n=len(text) - cut)
