"""How well a trial's topic matches the patient: BM25 of the profile's conditions and keywords against each
candidate's title, conditions, keywords and MeSH terms, with document frequencies from the candidate set
itself (all a screening has), scaled to 0..1 by the best candidate's score."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from backend.screening.models import PatientProfile
from backend.screening.note_reader import WORD, fold, norm
from backend.sources import TrialDetail

K1, B = 1.2, 0.75
_STOP = frozenset(norm(w) for w in "a an the of and or with in on for to by at from as is are was be not no "
                  "patient patients study trial".split())


def terms(text: str) -> list[str]:
    return [w for w in (norm(t) for t in WORD.findall(fold(text))) if w not in _STOP and len(w) > 1]


def trial_text(t: TrialDetail) -> str:
    return " ".join([t.title, t.official_title or "", *t.conditions, *t.keywords, *t.condition_mesh_terms])


def profile_query(profile: PatientProfile) -> Counter[str]:
    """Query term weights: the main condition counts most, then the other conditions and keywords."""
    weights: Counter[str] = Counter()
    for i, condition in enumerate(profile.conditions[:8]):
        for term in set(terms(condition)):
            weights[term] += 2.0 if i == 0 else 1.0
    for keyword in profile.keywords:
        for term in set(terms(keyword)):
            weights[term] += 0.5
    for marker in profile.key_facts.biomarkers:
        for term in set(terms(marker)):
            weights[term] += 0.5
    return weights


def relevance_scores(query: Counter[str], documents: Sequence[str]) -> list[float]:
    docs = [Counter(terms(d)) for d in documents]
    if not docs:
        return []
    n = len(docs)
    avg = sum(sum(d.values()) for d in docs) / n or 1.0
    df = Counter(term for d in docs for term in d)
    raw = []
    for d in docs:
        length = sum(d.values())
        s = 0.0
        for term, weight in query.items():
            tf = d.get(term, 0)
            if tf:
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                s += weight * idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avg))
        raw.append(s)
    top = max(raw)
    return [round(s / top, 6) if top > 0 else 0.0 for s in raw]
