"""How well a trial's topic matches the patient, 0..1, with no model: what a screener checks first ("is this
trial about my patient's disease?").

Two readings, averaged:
- coverage: the best-covered of the trial's named topics (its conditions, their MeSH terms, its title) by
  the words the note affirms (negated mentions such as "no history of diabetes" do not count), each word
  weighted by its rarity: "pulmonary embolism" covered scores high, "disease" little;
- BM25 of the note and of the profile (main condition weighted most) against the trial's title, conditions,
  keywords and MeSH terms, scaled by the best candidate.
A word's rarity is counted over the corpus's trials (`trial_words`), not over the candidates: these were found
for the patient, so over them the patient's own condition would be the commonest word and weigh least.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from backend.screening.models import PatientProfile
from backend.screening.note_reader import read_note
from backend.screening.trial_words import idf, terms, trial_text
from backend.sources import TrialDetail

K1, B = 1.2, 0.75


def profile_query(profile: PatientProfile) -> dict[str, float]:
    """Query term weights: the main condition counts most, then the other conditions and keywords."""
    weights: dict[str, float] = {}
    for i, condition in enumerate(profile.conditions[:8]):
        for term in set(terms(condition)):
            weights[term] = weights.get(term, 0.0) + (2.0 if i == 0 else 1.0)
    for phrase in [*profile.keywords, *profile.key_facts.biomarkers]:
        for term in set(terms(phrase)):
            weights[term] = weights.get(term, 0.0) + 0.5
    return weights


def _bm25(query: Mapping[str, float], docs: list[Counter[str]]) -> list[float]:
    avg = sum(sum(d.values()) for d in docs) / len(docs) or 1.0
    raw = []
    for d in docs:
        length = sum(d.values())
        s = 0.0
        for term, weight in query.items():
            tf = d.get(term, 0)
            if tf:
                s += weight * idf(term) * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avg))
        raw.append(s)
    top = max(raw, default=0.0)
    return [s / top if top > 0 else 0.0 for s in raw]


def affirmed_terms(note: str) -> set[str]:
    """Stems the note states of the patient: not after a negation cue, not about a relative."""
    read = read_note(note)
    return {w for c in read.clauses if not c.relative for w in c.words[: c.negated_from]}


def relevance_scores(note: str, profile: PatientProfile, trials: Sequence[TrialDetail]) -> list[float]:
    if not trials:
        return []
    docs = [Counter(terms(trial_text(t))) for t in trials]
    said = affirmed_terms(note)
    coverage = []
    for t in trials:
        best = 0.0
        for topic in (*t.conditions, *t.condition_mesh_terms, t.title):
            wanted = set(terms(topic))
            total = sum(idf(w) for w in wanted)
            if total > 0:
                best = max(best, sum(idf(w) for w in wanted if w in said) / total)
        coverage.append(best)
    by_note = _bm25(Counter(terms(note)), docs)
    by_profile = _bm25(profile_query(profile), docs)
    return [round((2 * c + b + p) / 4, 6) for c, b, p in zip(coverage, by_note, by_profile, strict=True)]
