"""TrialScout's patient and screening as the page context carries them (`context.screening`), and as the
prompt says them: the profile, then the ranked shortlist with each trial's verdict, score and criterion
counts, fitted into a share of the context budget.

The page sends ids, the profile and the shortlist, never the note: the note stays on the server, and the
screening tools read it (its sentences quoted as evidence) from the user's own stored screening by those
ids. The shapes are plain here (the profile a mapping, the verdict a literal), so the page layer needs
nothing of the screening package: `GET /api/patients/{id}` and `GET /api/screenings/{id}` give them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from backend.pages._format import short
from backend.pages.budget import budget_chars, fit_lines

SHARE = 4  # the patient and the shortlist may fill a quarter of the page context budget
MAX_SHORTLIST = 100  # a screening's most trials
FitVerdict = Literal["ELIGIBLE", "EXCLUDED", "UNCERTAIN", "NOT_RELEVANT"]


class ShortlistEntry(BaseModel):
    """One screened trial as the table shows it (its fit column)."""

    nct_id: str = Field(max_length=20)
    title: str = Field("", max_length=1000)
    verdict: FitVerdict
    score: float
    met: int = Field(0, ge=0)
    not_met: int = Field(0, ge=0)
    unknown: int = Field(0, ge=0)


class ScreeningPageContext(BaseModel):
    """`context.screening` on TrialScout: the patient loaded in the panel and the screening shown in the
    table. The note is never sent (it is referenced by `patient_id`/`version_id` and read on the server)."""

    patient_id: int
    label: str = Field("", max_length=200)
    version_id: int | None = None
    profile: dict[str, Any] | None = Field(None, description="The patient's PatientProfile, as the panel shows it")
    screening_id: int | None = Field(None, description="The screening whose verdicts the table shows")
    status: Literal["running", "complete", "failed", "stopped", "interrupted"] | None = None
    shortlist: list[ShortlistEntry] = Field(default_factory=list, max_length=MAX_SHORTLIST,
                                            description="Best first, as ranked")
    open_nct_id: str | None = Field(None, max_length=20, description="The trial whose criteria are open")


PROFILE_FIELDS = (("Age", "age"), ("Sex", "sex"), ("Conditions", "conditions"), ("Stage", "stage"),
                  ("Biomarkers", "biomarkers"), ("Prior therapies", "prior_therapies"),
                  ("Current therapies", "current_therapies"), ("Comorbidities", "comorbidities"),
                  ("Performance status", "performance_status"), ("Labs", "labs"), ("Location", "location"),
                  ("Keywords", "keywords"), ("Summary", "summary"))


def _profile_lines(profile: Mapping[str, Any]) -> list[str]:
    facts = profile.get("key_facts")
    facts = facts if isinstance(facts, Mapping) else {}
    lines = []
    for label, key in PROFILE_FIELDS:
        value = profile.get(key, facts.get(key))
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        text = "; ".join(map(str, value[:30])) if isinstance(value, list) else "" if value is None else str(value)
        if text:
            lines.append(f"- {label}: {short(text, 300)}")
    return lines


def _entry(rank: int, e: ShortlistEntry) -> str:
    return (f"{rank}. {short(e.nct_id, 20)} | {e.verdict} | score {e.score:.2f} | met {e.met}, "
            f"not met {e.not_met}, unknown {e.unknown} | {short(e.title, 100)}")


def screening_section(context: Mapping[str, Any]) -> list[str]:
    raw = context.get("screening")
    if raw is None:
        return ["PATIENT: none loaded (the patient panel is empty)"]
    try:
        s = ScreeningPageContext.model_validate(raw)
    except ValidationError:
        return ["PATIENT: the page's patient context could not be read"]
    lines = [f"PATIENT {s.patient_id} \"{short(s.label, 80)}\""
             + (f" (version {s.version_id})" if s.version_id else "")
             + ": the note stays on the server, not shown here; get_screening_trial quotes its sentences as evidence"]
    lines += _profile_lines(s.profile) if s.profile else ["- Profile: not sent by the page"]
    if s.screening_id is None:
        lines.append("SCREENING: none shown in the table yet")
        return lines
    tally = {v: sum(1 for e in s.shortlist if e.verdict == v)
             for v in ("ELIGIBLE", "EXCLUDED", "UNCERTAIN", "NOT_RELEVANT")}
    lines.append(f"SCREENING {s.screening_id} ({s.status or 'status unknown'}; {len(s.shortlist)} trials screened: "
                 + ", ".join(f"{n} {v}" for v, n in tally.items()) + "), best first:")
    if s.open_nct_id:
        lines.append(f"- Criteria view open: {short(s.open_nct_id, 20)}")
    limit = max(600, budget_chars() // SHARE - sum(len(line) + 1 for line in lines))
    shown, _ = fit_lines((_entry(i, e) for i, e in enumerate(s.shortlist, 1)), limit, len(s.shortlist),
                         "[{n} more screened trials not shown: get_screening_trial reads any by NCT id or rank]")
    return lines + shown
