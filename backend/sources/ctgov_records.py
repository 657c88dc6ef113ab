"""ClinicalTrials.gov v2 study JSON -> `TrialDetail` / `TrialSummary`.

Both backends read the same v2 `Study` objects (live responses, offline corpus), so both parse
here. Every module and field is optional: `fields`-projected responses hold only the requested
pieces, and real full records routinely lack locations, maximumAge or phases.
"""

from __future__ import annotations

import re
from typing import Any, get_args

from backend.sources.models import Arm, Location, Outcome, Phase, TrialDetail, TrialSummary

_PHASES = set(get_args(Phase))
_SEXES = {"ALL", "FEMALE", "MALE"}
_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(year|month|week|day|hour|minute)s?\b", re.IGNORECASE)
_UNIT_YEARS = {"year": 1.0, "month": 1 / 12, "week": 7 / 365.25, "day": 1 / 365.25,
               "hour": 1 / 8766, "minute": 1 / 525960}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _strs(values: Any) -> list[str]:
    return [s for s in (_str(v) for v in _list(values)) if s]


def age_in_years(value: str | None) -> float | None:
    """'18 Years' -> 18.0, '6 Months' -> 0.5; None (no limit) for missing or 'N/A'."""
    if not value:
        return None
    match = _AGE.match(value)
    if not match:
        return None
    return float(match.group(1)) * _UNIT_YEARS[match.group(2).lower()]


def study_nct_id(study: dict[str, Any]) -> str | None:
    return _str(_dict(_dict(study.get("protocolSection")).get("identificationModule")).get("nctId"))


def _outcomes(values: Any) -> list[Outcome]:
    return [
        Outcome(measure=m, description=_str(o.get("description")), time_frame=_str(o.get("timeFrame")))
        for o in map(_dict, _list(values))
        if (m := _str(o.get("measure")))
    ]


def _location(raw: dict[str, Any]) -> Location:
    geo = _dict(raw.get("geoPoint"))
    return Location(
        facility=_str(raw.get("facility")), city=_str(raw.get("city")), state=_str(raw.get("state")),
        country=_str(raw.get("country")), zip=_str(raw.get("zip")), status=_str(raw.get("status")),
        lat=geo.get("lat") if isinstance(geo.get("lat"), int | float) else None,
        lon=geo.get("lon") if isinstance(geo.get("lon"), int | float) else None,
    )


def parse_study(study: dict[str, Any]) -> TrialDetail:
    """Parse one v2 `Study` object; raises ValueError only if it has no NCT id."""
    proto = _dict(study.get("protocolSection"))
    ident = _dict(proto.get("identificationModule"))
    status = _dict(proto.get("statusModule"))
    sponsors = _dict(proto.get("sponsorCollaboratorsModule"))
    desc = _dict(proto.get("descriptionModule"))
    conds = _dict(proto.get("conditionsModule"))
    design = _dict(proto.get("designModule"))
    arms_mod = _dict(proto.get("armsInterventionsModule"))
    elig = _dict(proto.get("eligibilityModule"))
    contacts = _dict(proto.get("contactsLocationsModule"))
    outcomes = _dict(proto.get("outcomesModule"))
    derived = _dict(study.get("derivedSection"))

    nct_id = _str(ident.get("nctId"))
    if not nct_id:
        raise ValueError("study record has no protocolSection.identificationModule.nctId")
    locations = [_location(loc) for loc in map(_dict, _list(contacts.get("locations")))]
    interventions = _list(arms_mod.get("interventions"))
    sex = _str(elig.get("sex"))
    enrollment = _dict(design.get("enrollmentInfo")).get("count")
    healthy = elig.get("healthyVolunteers")

    return TrialDetail(
        nct_id=nct_id,
        title=_str(ident.get("briefTitle")) or _str(ident.get("officialTitle")) or nct_id,
        phase=[p for p in _strs(design.get("phases")) if p in _PHASES],
        status=_str(status.get("overallStatus")),
        study_type=_str(design.get("studyType")),
        conditions=_strs(conds.get("conditions")),
        interventions=[n for n in (_str(_dict(i).get("name")) for i in interventions) if n],
        sponsor=_str(_dict(sponsors.get("leadSponsor")).get("name")),
        enrollment=enrollment if isinstance(enrollment, int) else None,
        start_date=_str(_dict(status.get("startDateStruct")).get("date")),
        completion_date=_str(_dict(status.get("completionDateStruct")).get("date"))
        or _str(_dict(status.get("primaryCompletionDateStruct")).get("date")),
        locations_count=len(locations),
        official_title=_str(ident.get("officialTitle")),
        acronym=_str(ident.get("acronym")),
        brief_summary=_str(desc.get("briefSummary")),
        detailed_description=_str(desc.get("detailedDescription")),
        eligibility_criteria=_str(elig.get("eligibilityCriteria")),
        minimum_age=_str(elig.get("minimumAge")),
        maximum_age=_str(elig.get("maximumAge")),
        sex=sex if sex in _SEXES else None,
        healthy_volunteers=healthy if isinstance(healthy, bool) else None,
        std_ages=_strs(elig.get("stdAges")),
        keywords=_strs(conds.get("keywords")),
        collaborators=[n for c in _list(sponsors.get("collaborators")) if (n := _str(_dict(c).get("name")))],
        sponsor_class=_str(_dict(sponsors.get("leadSponsor")).get("class")),
        intervention_types=list(dict.fromkeys(t for i in interventions if (t := _str(_dict(i).get("type"))))),
        condition_mesh_terms=_mesh_terms(derived.get("conditionBrowseModule")),
        intervention_mesh_terms=_mesh_terms(derived.get("interventionBrowseModule")),
        primary_outcomes=_outcomes(outcomes.get("primaryOutcomes")),
        secondary_outcomes=_outcomes(outcomes.get("secondaryOutcomes")),
        arms=[
            Arm(label=label, type=_str(a.get("type")), description=_str(a.get("description")),
                interventions=_strs(a.get("interventionNames")))
            for a in map(_dict, _list(arms_mod.get("armGroups")))
            if (label := _str(a.get("label")))
        ],
        locations=locations,
        has_results=bool(study.get("hasResults")),
        last_update_date=_str(_dict(status.get("lastUpdatePostDateStruct")).get("date")),
        # Not a v2 key: the offline corpus stamps each study with the date its copy was taken.
        snapshot_date=_str(study.get("snapshotDate")),
    )


def _mesh_terms(browse: Any) -> list[str]:
    return [t for t in (_str(_dict(m).get("term")) for m in _list(_dict(browse).get("meshes"))) if t]


def parse_summary(study: dict[str, Any]) -> TrialSummary:
    return parse_study(study).to_summary()
