"""TrialScout (app `trialscout`): a table of ClinicalTrials.gov trials with AI columns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backend.pages._format import ai_columns, item_lines, last_accepted, long_field, screen_lines, short, view_state
from backend.pages.budget import fit
from backend.pages.screening_context import screening_section
from backend.registry import ClientAction, PageConfig, register_page


def _phase(value: Any) -> str:
    return short("/".join(map(str, value[:4])) if isinstance(value, list) else value, 40) or "—"


def _trial(t: Mapping[str, Any]) -> str:
    enrollment = t.get("enrollment")
    return (f"- {short(t.get('nct_id'), 20)} | {short(t.get('title'))} | {_phase(t.get('phase'))} | "
            f"{short(t.get('status'), 30) or '—'} | n={short(enrollment, 12) if enrollment is not None else '?'}"
            + (f" | sponsor: {short(t['sponsor'], 60)}" if t.get("sponsor") else ""))


def build_context(context: Mapping[str, Any]) -> str:
    def field(key: str, empty: str = "not set", limit: int = 300) -> str:
        value = context.get(key)
        if isinstance(value, list):
            value = ", ".join(map(str, value[:20])) + (f" (+{len(value) - 20:,} more)" if len(value) > 20 else "")
        return long_field(value, limit) if value not in (None, "") else empty

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
        f"- Sex: {field('sex', 'any', 20)} | Study type: {field('study_type', 'any', 20)} | "
        f"Ages: {field('min_age', 'any', 20)} to {field('max_age', 'any', 20)}",
        f"- Eligibility keywords: {field('eligibility_keywords', limit=1000)}",
        *screen_lines(context),
        *last_accepted(context),
        *view_state(context, "nct_id"),
        "",
        ai_columns(context),
        "",
        *screening_section(context),
        "",
        item_lines(context.get("trials"), _trial, context.get("_staged"), "trials", "trials"),
    ]
    return fit(lines)


register_page(PageConfig(
    page="trialscout",
    app="trialscout",
    context_builder=build_context,
    payloads=("trial_search_suggestion", "ai_column_suggestion", "trial_search_results", "trial_details", "chart",
              "filter_suggestion", "patient_profile_edit", "screening_proposal", "screening_report"),
    tools=("search_trials", "get_trial", "get_staged_items", "get_result_stats"),
    # Only with a patient in the panel: every screening tool reads that patient's stored screening.
    context_tools={"screening": ("get_screening_trial", "find_screening_sites", "propose_profile_edit",
                                 "propose_screening", "create_screening_report")},
    staged_keys=("trials",),
    starter_prompts=(
        "Find recruiting phase 2 or 3 trials for melanoma with brain metastases",
        "Count the loaded trials by phase",
        "Add an AI column: does the trial allow prior immunotherapy?",
    ),
    client_actions=(
        ClientAction("run_search", "Run the trial search form as it is"),
        ClientAction("open_trial", "Open a trial's detail view", data=("nct_id",)),
        ClientAction("clear_form", "Clear the trial search form"),
        ClientAction("next_page", "Show the next page of results"),
        ClientAction("previous_page", "Show the previous page of results"),
    ),
))
