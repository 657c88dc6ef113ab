"""TrialScout's screening tools: read one trial's stored criterion results, find the shortlist's sites
near a place, propose a profile edit or a new screening (cards the user accepts), build the report.

Every tool reads the user's own stored patient and screening (`ToolContext.screenings`, owner-scoped:
another user's ids are "not found"), named by the page's `context.screening`; the note is read on the
server and only its sentences cited as evidence reach the model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from backend.errors import Conflict, NotFound
from backend.exports import screening_reports
from backend.pages.screening_context import ScreeningPageContext
from backend.registry import ToolContext, ToolResult, card_of, tool
from backend.screening import explain
from backend.screening.assist_schemas import ScreeningReportRequest
from backend.screening.cards import (
    ProfileChange,
    ProfileEditProposal,
    ProfileField,
    ProposedTrial,
    ScreeningProposal,
    ScreeningReportCard,
)
from backend.screening.desk import ScreeningDesk
from backend.screening.models import MAX_CANDIDATES, PatientProfile, ScreenedTrial, ScreenRequest
from backend.screening.schemas import ScreeningDetail
from backend.sources.models import OverallStatus

NO_PATIENT = ("No patient is loaded in TrialScout's patient panel. Ask the user to paste a note or pick a saved "
              "patient in the panel first.")
NO_SCREENING = ("The patient loaded has not been screened yet. Offer to screen the loaded trials "
                "(propose_screening) or ask the user to press \"Screen the loaded trials\".")


def page_screening(ctx: ToolContext) -> ScreeningPageContext:
    raw = ctx.page_context.get("screening")
    if not isinstance(raw, Mapping):
        raise ValueError(NO_PATIENT)
    try:
        return ScreeningPageContext.model_validate(raw)
    except ValidationError:
        raise ValueError("The page's screening context could not be read; ask the user to reload "
                         "the patient.") from None


def _desk(ctx: ToolContext) -> tuple[ScreeningDesk, int]:
    if not isinstance(ctx.screenings, ScreeningDesk) or ctx.user_id is None:
        raise RuntimeError("screening tools need the app's screening store, and this turn has none")
    return ctx.screenings, ctx.user_id


async def _screening(ctx: ToolContext, screening_id: int | None = None) -> ScreeningDetail:
    desk, user_id = _desk(ctx)
    page = page_screening(ctx)
    try:
        if screening_id or page.screening_id:
            return await desk.screening(user_id, screening_id or page.screening_id or 0)
        found = await desk.latest_screening(user_id, page.patient_id)
    except NotFound as exc:
        raise ValueError(f"{exc.detail} It may have been deleted, or belong to someone else.") from None
    if found is None:
        raise ValueError(NO_SCREENING)
    return found


def _pick(detail: ScreeningDetail, nct_id: str | None, rank: int | None) -> ScreenedTrial:
    if nct_id:
        key = nct_id.strip().upper()
        for trial in detail.trials:
            if trial.nct_id == key:
                return trial
        raise ValueError(f"{key} is not among the {len(detail.trials)} trials of screening {detail.id}"
                         f" ({', '.join(t.nct_id for t in detail.trials[:20])}).")
    if rank is not None:
        if 1 <= rank <= len(detail.trials):
            return detail.trials[rank - 1]
        raise ValueError(f"Screening {detail.id} has {len(detail.trials)} screened trials; there is no #{rank}.")
    raise ValueError("Name the trial: nct_id, or its rank in the shortlist (1 = first).")


class ScreeningTrialInput(BaseModel):
    nct_id: str | None = Field(None, max_length=20, description="The trial's NCT ID")
    rank: int | None = Field(None, ge=1, le=MAX_CANDIDATES,
                             description="Or its place in the ranked shortlist: 1 = first, 2 = second …")
    screening_id: int | None = Field(None, description="Default: the screening the page shows")


@tool(is_global=False)
async def get_screening_trial(params: ScreeningTrialInput, ctx: ToolContext) -> str:
    """Read one screened trial's stored results for the patient in the panel: its verdict, score and every
    criterion with its label (MET / NOT_MET / UNKNOWN read from the patient's side: an exclusion NOT_MET is
    one that applies), the reasoning, and the note's sentences quoted as evidence. Use it to explain why a
    trial is excluded or uncertain, or what would make the patient eligible."""
    detail = await _screening(ctx, params.screening_id)
    trial = _pick(detail, params.nct_id, params.rank)
    rank = next(i for i, t in enumerate(detail.trials, 1) if t.nct_id == trial.nct_id)
    head = f"Screening {detail.id} ({detail.status}), trial #{rank} of {len(detail.trials)}."
    return head + "\n" + explain.trial_text(trial, explain.sentence_map(detail.sentences))


class SitesInput(BaseModel):
    place: str = Field(min_length=2, max_length=100, description="A city, state or country, e.g. \"Boston\"")
    radius_km: float = Field(80, ge=1, le=2000, description="How near counts (km), when coordinates are known")
    nct_ids: list[str] = Field(default_factory=list, max_length=MAX_CANDIDATES,
                               description="Default: every trial of the page's screening")


@tool(is_global=False)
async def find_screening_sites(params: SitesInput, ctx: ToolContext) -> str:
    """Which of the screened trials have a site at or near a place (by the sites' names and coordinates
    in the trial records), nearest first, with each trial's verdict."""
    detail = await _screening(ctx)
    desk, _ = _desk(ctx)
    wanted = [i.strip().upper() for i in params.nct_ids] or [t.nct_id for t in detail.trials]
    trials = {t.nct_id: t for t in detail.trials}
    records = await desk.records(wanted)
    if not records:
        return "The trial records could not be read, so their sites are unknown."
    near = explain.sites_near(records, params.place, params.radius_km)
    point = explain.place_point(records, params.place)
    how = (f"within {params.radius_km:.0f} km of {params.place} (coordinates from the records' own sites)"
           if point else f"naming {params.place} (no record gives its coordinates, so distance is not measured)")
    lines = [f"{len(near)} of {len(records)} trials have a site {how}:"]
    for nct in [n for n in wanted if n in near]:
        verdict = trials[nct].verdict.value if nct in trials else "not screened"
        sites = near[nct]
        lines.append(f"- {nct} ({verdict}): " + "; ".join(s.label for s in sites[:5])
                     + (f" and {len(sites) - 5} more" if len(sites) > 5 else ""))
    none = [n for n in wanted if n not in near and any(r.nct_id == n for r in records)]
    if none:
        lines.append("No site there: " + ", ".join(none))
    return "\n".join(lines)


class ProfileEdit(BaseModel):
    field: ProfileField
    mode: Literal["set", "add", "remove"] = Field("set", description="add/remove: an item of a list field")
    value: str | float | list[str] | None = Field(description="The new value (null clears a single field)")


class ProfileEditInput(BaseModel):
    edits: list[ProfileEdit] = Field(min_length=1, max_length=20)
    explanation: str = Field(max_length=1000, description="Why, in a sentence the user reads on the card")


KEY_FACTS = {"stage", "biomarkers", "prior_therapies", "current_therapies", "comorbidities", "performance_status",
             "labs", "location"}


def _show(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return ", ".join(map(str, value)) if isinstance(value, list) else "" if value is None else str(value)


def apply_edits(profile: PatientProfile, edits: list[ProfileEdit]) -> tuple[PatientProfile, list[ProfileChange]]:
    data = profile.model_dump(mode="json")
    changes = []
    for edit in edits:
        holder = data["key_facts"] if edit.field in KEY_FACTS else data
        before = holder.get(edit.field)
        if isinstance(before, list):
            items = edit.value if isinstance(edit.value, list) else [] if edit.value is None else [str(edit.value)]
            lowered = {i.lower() for i in items}
            after: Any = ([*before, *[i for i in items if i.lower() not in {b.lower() for b in before}]]
                          if edit.mode == "add" else [b for b in before if b.lower() not in lowered]
                          if edit.mode == "remove" else items)
        else:
            after = None if edit.mode == "remove" else edit.value
        holder[edit.field] = after
        if after != before:
            changes.append(ProfileChange(field=edit.field, before=_show(before), after=_show(after)))
    try:
        return PatientProfile.model_validate(data), changes
    except ValidationError as exc:
        raise ValueError(f"That edit does not fit the profile: {exc.errors()[0]['msg']}") from None


@tool(is_global=False, payload=ProfileEditProposal)
async def propose_profile_edit(params: ProfileEditInput, ctx: ToolContext) -> ToolResult:
    """Propose an edit of the loaded patient's profile as a card; nothing changes until the user accepts it
    (Accept saves a new version, which a new screening then uses). Fields: age, sex, conditions, keywords,
    summary, and the key facts stage, biomarkers, prior_therapies, current_therapies, comorbidities,
    performance_status, labs, location."""
    desk, user_id = _desk(ctx)
    page = page_screening(ctx)
    try:
        patient = await desk.patient(user_id, page.patient_id)
    except NotFound as exc:
        raise ValueError(exc.detail) from None
    profile, changes = apply_edits(patient.profile, params.edits)
    if not changes:
        return ToolResult(text="The profile already says that; nothing to change.")
    card = ProfileEditProposal(patient_id=patient.id, version_id=patient.version.id, profile=profile,
                               changes=changes, explanation=params.explanation)
    said = "; ".join(f"{c.field}: {c.before or '—'} → {c.after or '—'}" for c in changes)
    return ToolResult(text=f"Proposed to the user as a card (not saved until they accept): {said}.",
                      payload=card_of(card))


class ProposeScreeningInput(BaseModel):
    nct_ids: list[str] = Field(default_factory=list, max_length=MAX_CANDIDATES, description="Trials to screen")
    loaded_status: list[OverallStatus] = Field(
        default_factory=list, description="Also the trials loaded in the table with these statuses (e.g. "
                                          "RECRUITING) that the current screening has not screened")
    keep_screened: bool = Field(True, description="Screen the current screening's trials again too (cached)")
    explanation: str = Field(max_length=1000)


def _loaded(ctx: ToolContext) -> list[Mapping[str, Any]]:
    rows = ctx.staged.get("trials") or ctx.page_context.get("trials") or []
    return [r for r in rows if isinstance(r, Mapping) and isinstance(r.get("nct_id"), str)]


@tool(is_global=False, payload=ScreeningProposal)
async def propose_screening(params: ProposeScreeningInput, ctx: ToolContext) -> ToolResult:
    """Propose a new screening of the loaded patient as a card the user accepts (Accept starts it): named
    trials, and/or the loaded trials of some statuses not screened yet ("screen the recruiting ones too").
    With neither, it searches trials from the profile."""
    page = page_screening(ctx)
    screened: list[str] = [s.nct_id for s in page.shortlist]
    if page.screening_id is not None and params.keep_screened and not screened:
        screened = [t.nct_id for t in (await _screening(ctx)).trials]
    rows = {r["nct_id"].upper(): r for r in _loaded(ctx)}
    picked = [i.strip().upper() for i in params.nct_ids]
    if params.loaded_status:
        wanted = set(params.loaded_status)
        picked += [n for n, r in rows.items() if str(r.get("status") or "").upper() in wanted and n not in screened]
    added = [n for n in dict.fromkeys(picked) if n not in screened]
    if (params.nct_ids or params.loaded_status) and not added:
        return ToolResult(text="Every trial asked for is already in the current screening; nothing new to screen.")
    ids = list(dict.fromkeys((screened if params.keep_screened and added else []) + added))[:MAX_CANDIDATES]
    try:
        request = ScreenRequest(nct_ids=ids)
    except ValidationError as exc:
        raise ValueError(f"Those are not all NCT ids: {exc.errors()[0]['msg']}") from None
    trials = [ProposedTrial(nct_id=n, title=str(rows.get(n, {}).get("title") or ""),
                            status=rows.get(n, {}).get("status")) for n in ids]
    card = ScreeningProposal(patient_id=page.patient_id, request=request, trials=trials,
                             explanation=params.explanation)
    what = (f"{len(added)} new trial(s) ({', '.join(added[:10])}" + (" …" if len(added) > 10 else "") + ")"
            + (f" with the {len(ids) - len(added)} already screened" if len(ids) > len(added) else "")
            if ids else "trials searched from the patient's profile")
    return ToolResult(text=f"Proposed to the user as a card (starts when they accept): a screening of {what}.",
                      payload=card_of(card))


class ReportInput(BaseModel):
    nct_ids: list[str] = Field(default_factory=list, max_length=MAX_CANDIDATES,
                               description="Only these trials; default: every screened trial, ranked")
    title: str | None = Field(None, max_length=200)


@tool(is_global=False, payload=ScreeningReportCard)
async def create_screening_report(params: ReportInput, ctx: ToolContext) -> ToolResult:
    """Build the screening report for the doctor and the patient from the stored results (profile, ranked
    shortlist with verdicts, deciding criteria with evidence, sites, glossary, questions for the doctor,
    disclaimer) as HTML and PDF; returns its links as a card."""
    detail = await _screening(ctx)
    desk, user_id = _desk(ctx)
    try:
        built = await screening_reports.create(desk, user_id, detail.id, ScreeningReportRequest(
            title=params.title, nct_ids=[i.strip().upper() for i in params.nct_ids]))
    except (NotFound, Conflict) as exc:
        raise ValueError(exc.detail) from None
    card = ScreeningReportCard(report=built, explanation=f"{built.trial_count} trials, ranked.")
    return ToolResult(text=f"Built the report \"{built.title}\" ({built.trial_count} trials): HTML {built.html_url}, "
                           f"PDF {built.pdf_url}. The card shows both links.", payload=card_of(card))
