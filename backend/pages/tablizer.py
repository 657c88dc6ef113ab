"""Tablizer (app `tablizer`): a table of PubMed articles with AI columns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backend.pages._format import ai_columns, item_lines, short, view_state
from backend.registry import ClientAction, PageConfig, register_page


def _article(a: Mapping[str, Any]) -> str:
    return f"- PMID: {a.get('pmid')} | {short(a.get('title'))} | {a.get('journal') or '—'} ({a.get('year') or 'n.d.'})"


def build_context(context: Mapping[str, Any]) -> str:
    snapshots = context.get("snapshots") or []
    compare = context.get("compare_snapshots") or []
    compare_state = f"ACTIVE between {' and '.join(map(str, compare))}" if context.get("compare_mode") else "inactive"
    lines = [
        "User is on Tablizer (PubMed article analysis).",
        "",
        "SEARCH STATE:",
        f"- Query: {context.get('query') or 'No search yet'}",
        f"- Dates: {context.get('date_start') or 'any'} to {context.get('date_end') or 'any'}",
        f"- Results: {context.get('loaded_count', 0)} loaded of {context.get('total_matched', 0)} total",
        *view_state(context, "pmid"),
        "",
        f"SNAPSHOTS: {len(snapshots)} saved searches",
        *[f"- [{s.get('id')}] {s.get('label') or 'untitled'}: {short(s.get('query'), 120)} ({s.get('count', '?')})"
          + (" [selected]" if str(s.get("id")) == str(context.get("selected_snapshot_id")) else "")
          for s in snapshots],
        f"- Compare mode: {compare_state}",
    ]
    if context.get("compare_mode") and isinstance(context.get("compare_summary"), Mapping):
        summary = context["compare_summary"]
        lines.append(f"- Compare: only in A {summary.get('only_a', '?')}, only in B {summary.get('only_b', '?')}, "
                     f"in both {summary.get('both', '?')}")
    lines += ["", ai_columns(context), "",
              item_lines(context.get("articles") or [], _article, context.get("_staged") or {}, "articles", "articles")]
    return "\n".join(lines)


register_page(PageConfig(
    page="tablizer",
    app="tablizer",
    context_builder=build_context,
    payloads=("pubmed_query_suggestion", "ai_column_suggestion"),
    tools=("get_pubmed_article", "get_staged_items"),
    staged_keys=("articles",),
    client_actions=(
        ClientAction("run_query", "Run a PubMed query in the search box (data: {query})"),
        ClientAction("open_article", "Open an article's detail view (data: {pmid})"),
        ClientAction("save_snapshot", "Save the current results as a snapshot"),
    ),
))
