"""TrialScout (app `trialscout`): a table of ClinicalTrials.gov trials with AI columns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backend.pages._format import ai_columns, item_lines, short, view_state
from backend.registry import ClientAction, PageConfig, register_page


def _phase(value: Any) -> str:
    return "/".join(value) if isinstance(value, list) else str(value or "—")


def _trial(t: Mapping[str, Any]) -> str:
    return (f"- {t.get('nct_id')} | {short(t.get('title'))} | {_phase(t.get('phase'))} | {t.get('status') or '—'}"
            f" | n={t.get('enrollment') if t.get('enrollment') is not None else '?'}")


def build_context(context: Mapping[str, Any]) -> str:
    def field(key: str, empty: str = "not set") -> str:
        value = context.get(key)
        if isinstance(value, list):
            return ", ".join(map(str, value)) or empty
        return str(value) if value not in (None, "") else empty

    lines = [
        "User is on TrialScout (clinical trials analysis).",
        "",
        "SEARCH STATE:",
        f"- Condition: {field('condition')}",
        f"- Intervention: {field('intervention')}",
        f"- Sponsor: {field('sponsor')}",
        f"- Phase: {field('phase', 'any')}",
        f"- Status: {field('status', 'any')}",
        f"- Location: {field('location', 'any')}",
        f"- Sex: {field('sex', 'any')} | Ages: {field('min_age', 'any')} to {field('max_age', 'any')}",
        f"- Eligibility keywords: {field('eligibility_keywords')}",
        f"- Results: {context.get('loaded_count', 0)} loaded of {context.get('total_matched', 0)} total",
        *view_state(context, "nct_id"),
        "",
        ai_columns(context),
        "",
        item_lines(context.get("trials") or [], _trial, context.get("_staged") or {}, "trials", "trials"),
    ]
    return "\n".join(lines)


register_page(PageConfig(
    page="trialscout",
    app="trialscout",
    context_builder=build_context,
    payloads=("trial_search_suggestion", "ai_column_suggestion", "trial_search_results", "trial_details"),
    tools=("search_trials", "get_trial", "get_staged_items"),
    staged_keys=("trials",),
    client_actions=(
        ClientAction("run_search", "Run the trial search form as it is"),
        ClientAction("open_trial", "Open a trial's detail view (data: {nct_id})"),
    ),
))
