"""TrialScout's patient and screening, as the page context says them (`context.screening`, the shape of
`ScreeningPageContext`): the profile, then the ranked shortlist with each trial's verdict, score and
criterion counts, fitted into a share of the context budget. The note is not sent by the page and not
shown here: the screening tools read it on the server.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from backend.pages._format import short
from backend.pages.budget import budget_chars, fit_lines
from backend.screening.assist_schemas import ScreeningPageContext, ShortlistEntry
from backend.screening.models import PatientProfile

SHARE = 4  # the patient and the shortlist may fill a quarter of the page context budget


def _profile_lines(p: PatientProfile) -> list[str]:
    f = p.key_facts
    facts = [("Age", f"{p.age:g}" if p.age is not None else ""), ("Sex", p.sex or ""),
             ("Conditions", "; ".join(p.conditions)), ("Stage", f.stage or ""),
             ("Biomarkers", "; ".join(f.biomarkers)), ("Prior therapies", "; ".join(f.prior_therapies)),
             ("Current therapies", "; ".join(f.current_therapies)), ("Comorbidities", "; ".join(f.comorbidities)),
             ("Performance status", f.performance_status or ""), ("Labs", "; ".join(f.labs)),
             ("Location", f.location or ""), ("Keywords", "; ".join(p.keywords)), ("Summary", p.summary)]
    return [f"- {k}: {short(v, 300)}" for k, v in facts if v]


def _entry(rank: int, e: ShortlistEntry) -> str:
    return (f"{rank}. {short(e.nct_id, 20)} | {e.verdict.value} | score {e.score:.2f} | met {e.met}, "
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
    tally = {v: sum(1 for e in s.shortlist if e.verdict.value == v)
             for v in ("ELIGIBLE", "EXCLUDED", "UNCERTAIN", "NOT_RELEVANT")}
    lines.append(f"SCREENING {s.screening_id} ({s.status or 'status unknown'}; {len(s.shortlist)} trials screened: "
                 + ", ".join(f"{n} {v}" for v, n in tally.items()) + "), best first:")
    if s.open_nct_id:
        lines.append(f"- Criteria view open: {short(s.open_nct_id, 20)}")
    limit = max(600, budget_chars() // SHARE - sum(len(line) + 1 for line in lines))
    shown, _ = fit_lines((_entry(i, e) for i, e in enumerate(s.shortlist, 1)), limit, len(s.shortlist),
                         "[{n} more screened trials not shown: get_screening_trial reads any by NCT id or rank]")
    return lines + shown
