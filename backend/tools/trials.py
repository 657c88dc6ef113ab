"""TrialScout tools: `search_trials` and `get_trial` over the ClinicalTrials.gov source.

What the model reads is compact (15 trials, 120-character titles, 3 interventions, 10 locations);
the payload carries the full records for the cards.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from pydantic import BaseModel, Field

from backend.payloads.research import TrialSearchResults
from backend.registry import ToolContext, ToolProgress, ToolResult, card_of, tool
from backend.sources.models import OverallStatus, TrialDetail, TrialSearchParams, TrialSummary, checked_nct_id
from backend.text import clip

MAX_TRIALS_TO_MODEL = 15
TITLE_CHARS = 120
MAX_INTERVENTIONS = 3
MAX_CONDITIONS = 3  # spec (PRESCREEN diagram 2): compact rows carry conditions[:3]
MAX_LOCATIONS = 10
ELIGIBILITY_CHARS = 6000


def trial_line(t: TrialSummary) -> str:
    phase = "/".join(t.phase) or "no phase"
    interventions = ", ".join(t.interventions[:MAX_INTERVENTIONS]) or "—"
    more = f" +{len(t.interventions) - MAX_INTERVENTIONS}" if len(t.interventions) > MAX_INTERVENTIONS else ""
    conditions = "; ".join(t.conditions[:MAX_CONDITIONS]) or "—"
    study_type = f" | {t.study_type.lower()}" if t.study_type else ""
    return (f"- {t.nct_id}: {clip(t.title, TITLE_CHARS, squash=True)} | {phase}{study_type} | "
            f"{t.status or 'status unknown'} | conditions: {conditions} | "
            f"n={t.enrollment if t.enrollment is not None else '?'} | sponsor: {t.sponsor or '—'} | "
            f"interventions: {interventions}{more}" + (f" | status as of {t.snapshot_date}" if t.snapshot_date else ""))


def describe_params(params: TrialSearchParams) -> str:
    """The filters that narrow the search (the tool's own defaults, e.g. RECRUITING, count as filters)."""
    defaults = TrialSearchParams.model_fields
    parts = [f"{k}={v!r}" for k, v in params.model_dump(exclude_none=True).items()
             if k not in ("page_size", "page_token") and v != defaults[k].get_default(call_default_factory=True)]
    return ", ".join(parts) or "no filters"


RECRUITING: tuple[OverallStatus, ...] = ("RECRUITING",)


class SearchTrialsInput(TrialSearchParams):
    """The tool's view of a trial search: the spec's default status is RECRUITING, and 15 per page."""

    status: list[OverallStatus] = Field(default_factory=lambda: list(RECRUITING),
                                        description="Defaults to RECRUITING; an empty list means any status")
    page_size: int = Field(15, ge=1, le=100)


class NctIdInput(BaseModel):
    nct_id: str = Field(max_length=20, description="The NCT ID (e.g., NCT04613596)")


@tool(is_global=False, payload=TrialSearchResults)
async def search_trials(search: SearchTrialsInput, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
    """Search ClinicalTrials.gov (API v2). Returns total matches and up to 15 trials with phase, status,
    conditions, enrollment and sponsor. Status defaults to RECRUITING; pass status=[] for any. study_type
    narrows to INTERVENTIONAL or OBSERVATIONAL studies."""
    yield ToolProgress(stage="searching", message="Searching ClinicalTrials.gov…", progress=0.2)
    page = await ctx.require_sources().trials.search_trials(search)
    yield ToolProgress(stage="formatting", message=f"Found {page.total_count} trials", progress=0.9)
    shown = page.trials[:MAX_TRIALS_TO_MODEL]
    lines = [f"Search ({describe_params(search)}): {page.total_count} trials match; "
             f"showing {len(shown)} of this page of {len(page.trials)}."]
    lines += [trial_line(t) for t in shown]
    if page.next_page_token:
        lines.append(f"More results: call search_trials again with page_token={page.next_page_token!r}.")
    if not page.trials:
        lines.append("No trials match. Consider fewer filters, synonyms, or any status (status=[]).")
    yield ToolResult(text="\n".join(lines), payload=card_of(TrialSearchResults(
        params=search.model_dump(exclude_none=True), total_count=page.total_count,
        next_page_token=page.next_page_token, trials=page.trials)))


def trial_text(t: TrialDetail) -> str:
    locations = [", ".join(x for x in (loc.facility, loc.city, loc.country) if x) for loc in t.locations]
    outcomes = "\n".join(f"- {o.measure}" + (f" ({o.time_frame})" if o.time_frame else "")
                         for o in t.primary_outcomes) or "Not specified"
    eligibility = clip(t.eligibility_criteria or "Not specified", ELIGIBILITY_CHARS,
                       note="\n[eligibility text truncated]")
    return "\n".join([
        f"=== Clinical Trial {t.nct_id} ===",
        f"Title: {t.title}",
        f"Official title: {t.official_title or '—'}",
        f"Phase: {'/'.join(t.phase) or 'no phase'} | Status: {t.status or 'unknown'} | "
        f"Enrollment: {t.enrollment if t.enrollment is not None else 'unknown'}"
        + (f" | Status as of {t.snapshot_date} (offline snapshot)" if t.snapshot_date else ""),
        f"Sponsor: {t.sponsor or 'Unknown'}",
        f"Conditions: {', '.join(t.conditions) or '—'}",
        f"Interventions: {', '.join(t.interventions) or '—'}",
        f"Ages: {t.minimum_age or 'no minimum'} to {t.maximum_age or 'no maximum'} | Sex: {t.sex or 'ALL'}",
        f"Dates: start {t.start_date or '?'}, completion {t.completion_date or '?'}",
        f"Summary: {clip(t.brief_summary, 1500, squash=True) or '—'}",
        "", "=== Eligibility ===", eligibility,
        "", "=== Primary Outcomes ===", outcomes,
        "", f"=== Locations ({len(t.locations)}) ===",
        "\n".join(f"- {x}" for x in locations[:MAX_LOCATIONS]) or "None listed",
        *([f"(+{len(locations) - MAX_LOCATIONS} more)"] if len(locations) > MAX_LOCATIONS else []),
    ])


@tool(is_global=False, payload=TrialDetail)
async def get_trial(params: NctIdInput, ctx: ToolContext) -> ToolResult:
    """Get full details of a clinical trial by NCT ID: eligibility criteria, outcomes, arms, locations."""
    nct_id = checked_nct_id(params.nct_id)
    trial = await ctx.require_sources().trials.get_trial_by_nct_id(nct_id)
    return ToolResult(text=trial_text(trial), payload=card_of(trial))

