"""Tablizer (app `tablizer`): a table of PubMed articles with AI columns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backend.pages._format import ai_columns, item_lines, last_accepted, long_field, screen_lines, short, view_state
from backend.pages.budget import budget_chars, fit, fit_lines
from backend.registry import ClientAction, PageConfig, register_page


def _article(a: Mapping[str, Any]) -> str:
    return (f"- PMID: {short(a.get('pmid'), 20)} | {short(a.get('title'))} | {short(a.get('journal'), 60) or '—'}"
            f" ({short(a.get('year'), 10) or 'n.d.'})")


def _snapshot(s: Mapping[str, Any], selected: Any) -> str:
    return (f"- [{short(s.get('id'), 20)}] {short(s.get('label'), 60) or 'untitled'}: {short(s.get('query'), 120)}"
            f" ({short(s.get('count', '?'), 12)})" + (" [selected]" if str(s.get("id")) == str(selected) else ""))


def build_context(context: Mapping[str, Any]) -> str:
    budget = budget_chars()
    snapshots = [s for s in context.get("snapshots") or [] if isinstance(s, Mapping)]
    compare = context.get("compare_snapshots") or []
    compare_state = (f"ACTIVE between {' and '.join(short(c, 20) for c in compare[:2])}"
                     if context.get("compare_mode") and isinstance(compare, list) else "inactive")
    snapshot_lines, _ = fit_lines((_snapshot(s, context.get("selected_snapshot_id")) for s in snapshots),
                                  budget // 8, len(snapshots), "[{n} more snapshots not shown]")
    lines = [
        "User is on Tablizer (PubMed article analysis).",
        "",
        "SEARCH STATE:",
        f"- Query: {long_field(context.get('query'), min(2000, budget // 10)) or 'No search yet'}",
        f"- Dates: {short(context.get('date_start'), 20) or 'any'} to {short(context.get('date_end'), 20) or 'any'}",
        *screen_lines(context),
        *last_accepted(context),
        *view_state(context, "pmid"),
        "",
        f"SNAPSHOTS: {len(snapshots)} saved searches",
        *snapshot_lines,
        f"- Compare mode: {compare_state}",
    ]
    if context.get("compare_mode") and isinstance(context.get("compare_summary"), Mapping):
        summary = context["compare_summary"]
        lines.append(f"- Compare: only in A {short(summary.get('only_a', '?'), 12)}, only in B "
                     f"{short(summary.get('only_b', '?'), 12)}, in both {short(summary.get('both', '?'), 12)}")
    lines += ["", ai_columns(context), "",
              item_lines(context.get("articles"), _article, context.get("_staged"), "articles", "articles")]
    return fit(lines)


register_page(PageConfig(
    page="tablizer",
    app="tablizer",
    context_builder=build_context,
    payloads=("pubmed_query_suggestion", "ai_column_suggestion", "chart", "filter_suggestion"),
    tools=("get_pubmed_article", "get_full_text", "get_staged_items", "get_result_stats"),
    staged_keys=("articles",),
    starter_prompts=(
        "Build a PubMed query for EGFR-mutant lung cancer and osimertinib resistance",
        "Summarise the themes of the loaded articles",
        "Add an AI column: is this a randomised controlled trial?",
    ),
    client_actions=(
        ClientAction("run_query", "Search PubMed: data.query is put in the search box and run; without it, the "
                     "search box runs as it is", data=("query",)),
        ClientAction("open_article", "Open an article's detail view", data=("pmid",)),
        ClientAction("save_snapshot", "Save the current results as a snapshot"),
        ClientAction("next_page", "Show the next page of results"),
        ClientAction("previous_page", "Show the previous page of results"),
    ),
))
