"""Stored screening results in words: what decided a trial's verdict, with the note's sentences as
evidence; the plain-language glossary and the questions for the doctor of the report; trial sites near a
place. Shared by the assistant's tools (what the model reads) and the report (what the patient reads),
so both say the same thing about the same result.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from backend.criteria.labels import Verdict
from backend.screening.models import CriterionResult, NoteSentence, ScreenedTrial, TrialVerdict
from backend.sources.models import Location, TrialDetail

VERDICT_WORDS = {
    TrialVerdict.ELIGIBLE: "looks eligible",
    TrialVerdict.EXCLUDED: "excluded",
    TrialVerdict.UNCERTAIN: "uncertain (not enough information to decide)",
    TrialVerdict.NOT_RELEVANT: "not relevant to the patient's condition",
}


def criterion_state(result: CriterionResult) -> str:
    """The label read for a person: an exclusion NOT_MET is one that applies (labels are the patient's side)."""
    inclusion = result.criterion.kind == "inclusion"
    if result.label == Verdict.MET:
        return "met" if inclusion else "does not apply"
    if result.label == Verdict.NOT_MET:
        return "not met" if inclusion else "applies (excludes)"
    return "not enough information"


def deciding(trial: ScreenedTrial) -> list[CriterionResult]:
    """The criteria that decided the verdict: what excluded, what is unknown, or the inclusions met."""
    if trial.verdict == TrialVerdict.EXCLUDED:
        return [c for c in trial.criteria if c.label == Verdict.NOT_MET]
    if trial.verdict == TrialVerdict.UNCERTAIN:
        return [c for c in trial.criteria if c.label == Verdict.UNKNOWN]
    if trial.verdict == TrialVerdict.ELIGIBLE:
        return [c for c in trial.criteria if c.criterion.kind == "inclusion" and c.label == Verdict.MET]
    return []


def evidence(result: CriterionResult, sentences: Mapping[int, str]) -> list[str]:
    return [sentences[i] for i in result.evidence if i in sentences]


def sentence_map(sentences: Iterable[NoteSentence]) -> dict[int, str]:
    return {s.index: s.text for s in sentences}


def counts(trial: ScreenedTrial) -> str:
    return f"met {trial.met}, not met {trial.not_met}, unknown {trial.unknown}"


def trial_text(trial: ScreenedTrial, sentences: Mapping[int, str], limit: int = 12_000) -> str:
    """One trial's stored criterion results, deciding ones first, for the model to explain."""
    lines = [f"{trial.nct_id}: {trial.title}",
             f"Verdict: {trial.verdict.value} ({VERDICT_WORDS[trial.verdict]}); score {trial.score:.2f}; "
             f"{counts(trial)}" + (f"; record snapshot {trial.snapshot_date}" if trial.snapshot_date else "")]
    if trial.reason:
        lines.append(f"Note: {trial.reason}")
    decisive = deciding(trial)
    if decisive:
        lines.append("DECIDING CRITERIA:")
        lines += [_criterion_line(c, sentences) for c in decisive]
    rest = [c for c in trial.criteria if c not in decisive]
    if rest:
        lines.append("OTHER CRITERIA:")
        lines += [_criterion_line(c, sentences) for c in rest]
    if not trial.criteria:
        lines.append("No criterion results are stored for this trial.")
    text = "\n".join(lines)
    return text if len(text) <= limit else text[:limit] + f"\n[… {len(text) - limit:,} more characters]"


def _criterion_line(c: CriterionResult, sentences: Mapping[int, str]) -> str:
    line = (f"- [{c.criterion.kind} {c.criterion.index + 1}] {c.criterion.text} => {c.label.value} "
            f"({criterion_state(c)})")
    if c.reasoning:
        line += f". Reasoning: {c.reasoning}"
    quoted = evidence(c, sentences)
    if quoted:
        line += " Evidence: " + " | ".join(f"\"{q}\"" for q in quoted)
    return line


# ---- the report's plain words ---------------------------------------------------------------------

GLOSSARY: dict[str, str] = {
    "inclusion criteria": "Conditions a person must meet to join a trial.",
    "exclusion criteria": "Conditions that keep a person out of a trial, even if they meet the others.",
    "eligible": "Meets every requirement checked here; the trial team still decides.",
    "excluded": "At least one requirement is not met, or a reason to keep the person out applies.",
    "uncertain": "The records do not say enough to decide; a doctor can often answer the open questions.",
    "recruiting": "The trial is enrolling people now.",
    "not yet recruiting": "The trial has not started enrolling yet.",
    "phase 1": "An early trial that mainly checks safety and dose in a small group.",
    "phase 2": "A trial that checks whether a treatment works and is safe in a larger group.",
    "phase 3": "A large trial that compares a treatment with the usual care.",
    "randomized": "Participants are assigned to a group by chance.",
    "placebo": "An inactive treatment used for comparison.",
    "metastatic": "Cancer that has spread from where it started to other parts of the body.",
    "biomarker": "A measurable sign in the body (a gene, a protein) that can guide treatment.",
    "ecog": "A scale from 0 (fully active) to 5 describing how daily activity is affected by illness.",
    "performance status": "How well a person can carry out daily activities.",
    "chemotherapy": "Medicines that kill fast-growing cells such as cancer cells.",
    "immunotherapy": "Treatment that helps the immune system fight disease.",
    "her2": "A protein that helps some cancers grow; tests say whether a tumour has too much of it.",
    "egfr": "A protein on cells; changes in its gene can drive some lung cancers.",
    "creatinine": "A blood test of how well the kidneys work.",
    "informed consent": "Agreeing to take part after being told the risks and benefits.",
    "contraception": "Ways to prevent pregnancy, often required during a trial.",
    "adjuvant": "Treatment given after the main treatment to lower the risk of the disease coming back.",
    "stage": "How large a cancer is and how far it has spread.",
}


def glossary(texts: Iterable[str]) -> list[tuple[str, str]]:
    """The glossary entries whose term the report uses (whole words, any case), in glossary order."""
    corpus = " ".join(texts).lower()
    return [(term, meaning) for term, meaning in GLOSSARY.items()
            if re.search(rf"(?<![a-z0-9]){re.escape(term)}(?![a-z0-9])", corpus)]


def questions(trials: Sequence[ScreenedTrial], limit: int = 10) -> list[str]:
    """What to ask the doctor, from the verdicts: the unknowns to settle, the exclusions to check."""
    out = ["Do these results match what you know of my health, and is anything in my records out of date?"]
    for trial in trials:
        if trial.verdict == TrialVerdict.ELIGIBLE:
            out.append(f"Would {trial.nct_id} ({_short(trial.title)}) suit me, and how would I contact its team?")
        elif trial.verdict == TrialVerdict.UNCERTAIN:
            open_ = [c for c in trial.criteria if c.label == Verdict.UNKNOWN][:2]
            if open_:
                asks = "; ".join(_short(c.criterion.text, 120) for c in open_)
                out.append(f"For {trial.nct_id}, can you tell whether this applies to me: {asks}?")
        elif trial.verdict == TrialVerdict.EXCLUDED:
            firm = [c for c in trial.criteria if c.label == Verdict.NOT_MET][:1]
            if firm:
                out.append(f"{trial.nct_id} appears to exclude me because of \"{_short(firm[0].criterion.text, 120)}\""
                           " — is that right, and could it change?")
    out.append("Which of these trials would you suggest first, and what would joining involve for me?")
    return out[:limit]


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# ---- sites ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Site:
    nct_id: str
    location: Location
    km: float | None  # from the place, when both have coordinates

    @property
    def label(self) -> str:
        where = ", ".join(p for p in (self.location.facility, self.location.city, self.location.state,
                                      self.location.country) if p)
        return where + (f" ({self.km:.0f} km)" if self.km is not None else "")


def place_key(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def _named(loc: Location, key: str) -> bool:
    parts = [place_key(p) for p in (loc.city, loc.state, loc.country, loc.zip, loc.facility) if p]
    return any(key == p or re.search(rf"\b{re.escape(key)}\b", p) for p in parts)


def place_point(records: Iterable[TrialDetail], place: str) -> tuple[float, float] | None:
    """The place's coordinates, read off a site of the records whose city (or state) is named so: the
    offline data has no gazetteer, so a place no record names has none."""
    key = place_key(place.split(",")[0])
    for record in records:
        for loc in record.locations:
            if loc.lat is not None and loc.lon is not None and loc.city and place_key(loc.city) == key:
                return loc.lat, loc.lon
    return None


def km_between(a: tuple[float, float], b: tuple[float, float]) -> float:
    lat1, lon1, lat2, lon2 = map(math.radians, (*a, *b))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 6371.0 * 2 * math.asin(math.sqrt(h))


def sites_near(records: Sequence[TrialDetail], place: str, radius_km: float) -> dict[str, list[Site]]:
    """Per trial, its sites named after the place or within `radius_km` of it, nearest first."""
    key = place_key(place.split(",")[0])
    point = place_point(records, place)
    found: dict[str, list[Site]] = {}
    for record in records:
        for loc in record.locations:
            km = km_between(point, (loc.lat, loc.lon)) if point and loc.lat is not None and loc.lon is not None \
                else None
            if (km is not None and km <= radius_km) or (key and _named(loc, key)):
                found.setdefault(record.nct_id, []).append(Site(record.nct_id, loc, km))
    for sites in found.values():
        sites.sort(key=lambda s: s.km if s.km is not None else radius_km)
    return found
