"""Shared pieces of the Tablizer and TrialScout context builders (what the user sees, as text).

Every value is the client's and may be any size: each field is shortened, each list fitted into its
share of the page context budget (`backend/pages/budget.py`) with a note of what was left out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from backend.pages.budget import budget_chars, clip, fit_lines
from backend.text import clip as text_clip

SELECTED_SHOWN = 30
FILTERS_SHOWN = 12
OPEN_FIELDS = 14  # the open item's key fields (title, journal, phase, status, …); a long text is clipped
OPEN_TEXT = 800
AI_SHARE = 4  # the AI columns may fill a quarter of the page context budget, their verdicts included


def short(value: Any, limit: int = 90) -> str:
    """Any page value as one line of at most `limit` characters."""
    return text_clip(str(value if value is not None else ""), limit - 1, squash=True)


def long_field(value: Any, limit: int) -> str:
    """A free-text field (a query, keywords) on one line, clipped with a note of how much was cut."""
    return clip(" ".join(str(value if value is not None else "").split()), limit)


def ai_columns(context: Mapping[str, Any]) -> str:
    """Each AI column with its counts and every row's verdict, so "which trials scored Yes?" needs no
    filter first: boolean columns list the row ids under each verdict, text columns each row's answer.
    The columns share a quarter of the budget; a list that does not fit says how much was left out."""
    columns = [c for c in context.get("ai_columns") or [] if isinstance(c, Mapping)] \
        if isinstance(context.get("ai_columns"), list) else []
    if not columns:
        return "AI COLUMNS: none"
    share = max(300, budget_chars() // AI_SHARE // len(columns))
    lines = [f"AI COLUMNS: {len(columns)}"]
    for c in columns:
        if sum(map(len, lines)) > budget_chars() // AI_SHARE:
            lines.append(f"[{len(columns) - columns.index(c):,} more AI columns not shown]")
            break
        head = _column(c)
        lines += [head, *_verdicts(c, share - len(head))]
    return "\n".join(lines)


def _verdicts(c: Mapping[str, Any], limit: int) -> list[str]:
    verdicts = c.get("verdicts")
    if not isinstance(verdicts, Mapping) or not verdicts:
        return []
    rows = [(short(row, 20), short(value, 160)) for row, value in verdicts.items()]
    if c.get("type", "boolean") != "boolean":
        return fit_lines((f"  {row}: {value}" for row, value in rows), limit, len(rows),
                         "  [{n} more answers not shown]")[0]
    groups: dict[str, list[str]] = {}
    for row, value in rows:
        groups.setdefault(value, []).append(row)
    lines, _ = fit_lines((_id_list(f"  {value} ({len(ids):,}): ", ids, max(80, limit // len(groups)))
                          for value, ids in groups.items()), limit, len(groups), "  [{n} more verdicts not shown]")
    return lines


def _id_list(head: str, ids: list[str], limit: int) -> str:
    """`head` and as many ids as fit in `limit` characters, then how many more there are."""
    shown: list[str] = []
    used = len(head)
    for row in ids:
        if used + len(row) + 2 > limit - 16:
            break
        shown.append(row)
        used += len(row) + 2
    rest = len(ids) - len(shown)
    return head + ", ".join(shown) + (f" [+{rest:,} more]" if rest else "")


def _column(c: Mapping[str, Any]) -> str:
    line = f"- {short(c.get('name'), 80)} ({short(c.get('type', 'boolean'), 20)})"
    if c.get("criteria"):
        line += f": {short(c['criteria'], 160)}"
    if c.get("filter_active") or c.get("filter"):
        line += f" [filter ON: {short(c.get('filter') or 'yes only', 40)}]"
    counts = c.get("counts")
    if isinstance(counts, Mapping) and counts:
        # Zero counts say nothing; the rest (yes/no columns have seven keys with their qualifiers) all fit.
        nonzero = [(k, v) for k, v in counts.items() if v not in (0, "0")]
        line += " counts " + ", ".join(f"{short(k, 20)}={short(v, 12)}" for k, v in nonzero[:8])
    return line


def view_state(context: Mapping[str, Any], id_key: str) -> list[str]:
    lines = []
    sort = _mapping(context.get("sort"))
    if sort.get("field"):
        lines.append(f"- Sorted by: {short(sort['field'], 40)} {short(sort.get('direction', 'asc'), 10)}")
    pagination = _mapping(context.get("pagination"))
    if pagination:
        lines.append(f"- Page: {short(pagination.get('page', 1), 10)} "
                     f"({short(pagination.get('page_size', '?'), 10)} per page)")
    selected = context.get(f"selected_{id_key}s") or []
    if isinstance(selected, list) and selected:
        shown = ", ".join(short(s, 20) for s in selected[:SELECTED_SHOWN])
        lines.append(f"- Selected: {shown}"
                     + (f" [{len(selected) - SELECTED_SHOWN:,} more not shown]" if len(selected) > SELECTED_SHOWN
                        else ""))
    viewer = _mapping(context.get("viewer"))
    if viewer.get(id_key):
        lines.append(f"- Detail view open: {short(viewer[id_key], 20)}")
        lines += [f"  {short(key.replace('_', ' '), 30)}: {_open_value(value)}" for key, value in
                  list(viewer.items())[:OPEN_FIELDS] if key != id_key and value not in (None, "", [])]
    return lines


def _open_value(value: Any) -> str:
    if isinstance(value, list):
        return short(", ".join(map(str, value[:12])) + (f" (+{len(value) - 12} more)" if len(value) > 12 else ""), 300)
    return long_field(value, OPEN_TEXT) if isinstance(value, str) and len(value) > 300 else short(value, 300)


def result_counts(context: Mapping[str, Any]) -> str:
    """Total (the search's matches), loaded (rows fetched into the table) and shown (after the filters), each
    named: a filter that narrows the table must not read as a search that found little."""
    line = (f"- Results: {short(context.get('loaded_count', 0), 12)} loaded of "
            f"{short(context.get('total_matched', 0), 12)} total")
    shown = context.get("shown_count")
    if isinstance(shown, int) and not isinstance(shown, bool):
        line += f" | {shown:,} shown in the table after filters"
    return line


def screen_lines(context: Mapping[str, Any]) -> list[str]:
    """The counts, the filter chips (and how many loaded rows they hide) and the pinned charts: what narrows or
    sums up the table on screen."""
    return [result_counts(context), *_chips_and_charts(context)]


def _chips_and_charts(context: Mapping[str, Any]) -> list[str]:
    filters = [f for f in context.get("filters") or [] if isinstance(f, Mapping)] \
        if isinstance(context.get("filters"), list) else []
    lines = []
    if filters:
        loaded, shown = context.get("loaded_count"), context.get("shown_count")
        hidden = (f"; they hide {loaded - shown:,} of the {loaded:,} loaded rows"
                  if isinstance(loaded, int) and isinstance(shown, int) and loaded >= shown else "")
        chips = [f"{short(f.get('label') or f.get('field'), 80)} (field {short(f.get('field'), 30)} "
                 f"{short(f.get('op', 'equals'), 10)} {short(f.get('value'), 40)}"
                 + (", applied to the search" if f.get("scope") == "search" else "") + ")"
                 for f in filters[:FILTERS_SHOWN]]
        lines.append(f"- Active filters ({len(filters)}{hidden}): " + "; ".join(chips)
                     + (f" [{len(filters) - FILTERS_SHOWN} more]" if len(filters) > FILTERS_SHOWN else ""))
    else:
        lines.append("- Active filters: none")
    charts = [c for c in context.get("pinned_charts") or [] if isinstance(c, Mapping)] \
        if isinstance(context.get("pinned_charts"), list) else []
    if charts:
        lines.append(f"- Pinned charts ({len(charts)}): " + "; ".join(
            f"{short(c.get('title') or c.get('facet'), 60)} ({short(c.get('kind', 'bar'), 12)} of "
            f"{short(c.get('facet'), 30)}" + (f" by {short(c['stack_by'], 30)}" if c.get("stack_by") else "") + ")"
            for c in charts[:FILTERS_SHOWN]))
    else:
        lines.append("- Pinned charts: none")
    return lines


def last_accepted(context: Mapping[str, Any]) -> list[str]:
    """The card the user accepted since the last turn and what it did to the results, as one JSON line
    (`{"type", "query", "result_count", "previous_query", "previous_result_count"}`): the model (and the
    demo model, which parses this line) can say "your search now finds 2 trials, down from 24"."""
    accepted = _mapping(context.get("last_accepted"))
    if not accepted.get("type"):
        return []

    def count(value: Any) -> int | None:
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

    previous = accepted.get("previous_query")
    shown = {
        "type": short(accepted.get("type"), 60),
        "query": long_field(accepted.get("query"), 500),
        "result_count": count(accepted.get("result_count")),
        "previous_query": long_field(previous, 500) if previous is not None else None,
        "previous_result_count": count(accepted.get("previous_result_count")),
    }
    return [f"- Last accepted card: {json.dumps(shown, ensure_ascii=False)}"]


def item_lines(items: Any, fmt: Callable[[Mapping[str, Any]], str], staged: Any, key: str, noun: str) -> str:
    """The loaded rows the prompt lists (the holding pen keeps the rest for `get_staged_items`)."""
    rows = [i for i in items if isinstance(i, Mapping)] if isinstance(items, list) else []
    if not rows:
        return f"LOADED {noun.upper()}: none loaded"
    count = _mapping(staged).get(key, len(rows))
    total = count if isinstance(count, int) and count > len(rows) else len(rows)
    lines, listed = fit_lines((fmt(i) for i in rows), budget_chars() * 2 // 5, total,
                              f"[{{n}} more {noun} not shown: use get_staged_items]")
    head = f"LOADED {noun.upper()} ({listed} of {total} listed):" if total > listed else \
        f"LOADED {noun.upper()} ({listed}):"
    return head + "\n" + "\n".join(lines)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
