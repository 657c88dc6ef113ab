"""The TrialGPT criterion annotations (copied from shared fixtures into `data/`) and seeded sampling.

One row is one (patient note, trial criterion) pair judged by experts and by GPT-4 with the 6 TrialGPT
labels; `label_map.map_label` turns both into verdicts. The file is `ncbi/TrialGPT-Criterion-Annotations`
(1015 rows, public domain), converted to JSONL with values unchanged.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from backend.criteria.labels import Verdict
from backend.eval.label_map import map_label
from backend.eval.metrics import VERDICT_LABELS

ANNOTATIONS_PATH = Path(__file__).resolve().parent / "data" / "criterion_annotations.jsonl"

Allocation = Literal["balanced", "proportional"]


class CriterionAnnotation(BaseModel):
    """One expert-annotated (patient, criterion) pair; field names follow the spec's table."""

    model_config = ConfigDict(frozen=True)

    annotation_id: int
    patient_id: str
    note: str
    trial_id: str
    trial_title: str
    criterion_type: Literal["inclusion", "exclusion"]
    criterion_text: str | None  # one row of the dataset has none (a trial without exclusion criteria)
    expert_label: Verdict
    expert_label_raw: str
    expert_sentences: list[int]
    gpt4_label: Verdict
    gpt4_label_raw: str
    gpt4_sentences: list[int]
    gpt4_explanation: str
    explanation_correctness: str
    training: bool

    @property
    def evaluable(self) -> bool:
        """A model can only be asked about a criterion that has text."""
        return bool(self.criterion_text and self.criterion_text.strip())


def parse_sentence_indices(raw: str | list[int] | None) -> list[int]:
    """The dataset stores sentence indices as a stringified list, e.g. "[0, 1, 2]"."""
    if raw is None:
        return []
    values = raw if isinstance(raw, list) else json.loads(raw) if raw.strip() else []
    return [int(v) for v in values]


def annotation_from_row(row: dict[str, Any]) -> CriterionAnnotation:
    return CriterionAnnotation(
        annotation_id=row["annotation_id"], patient_id=row["patient_id"], note=row["note"],
        trial_id=row["trial_id"], trial_title=row["trial_title"], criterion_type=row["criterion_type"],
        criterion_text=row["criterion_text"],
        expert_label=map_label(row["expert_eligibility"]), expert_label_raw=row["expert_eligibility"],
        expert_sentences=parse_sentence_indices(row["expert_sentences"]),
        gpt4_label=map_label(row["gpt4_eligibility"]), gpt4_label_raw=row["gpt4_eligibility"],
        gpt4_sentences=parse_sentence_indices(row["gpt4_sentences"]),
        gpt4_explanation=row["gpt4_explanation"], explanation_correctness=row["explanation_correctness"],
        training=bool(row["training"]),
    )


def load_annotations(path: Path = ANNOTATIONS_PATH) -> list[CriterionAnnotation]:
    with path.open(encoding="utf-8") as fh:
        return [annotation_from_row(json.loads(line)) for line in fh if line.strip()]


def file_sha256(path: Path = ANNOTATIONS_PATH) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


_NUMBERED_SENTENCE = re.compile(r"^\s*(\d+)\.\s+(.*)$")


def note_sentences(note: str) -> dict[int, str]:
    """The note's numbered sentences ("0. A 58-year-old …") by index."""
    found = (_NUMBERED_SENTENCE.match(line) for line in note.splitlines())
    return {int(m.group(1)): m.group(2).strip() for m in found if m}


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def sentence_indices(note: str, evidence: Iterable[str]) -> list[int]:
    """Which numbered note sentences the quoted evidence points at (by a leading "N." or by text)."""
    sentences = {i: _norm(s) for i, s in note_sentences(note).items()}
    hits: set[int] = set()
    for quote in evidence:
        m = _NUMBERED_SENTENCE.match(quote)
        number = m.group(1) if m else quote.strip().rstrip(".") if quote.strip().rstrip(".").isdigit() else None
        if number is not None and int(number) in sentences:
            hits.add(int(number))
            continue
        q = _norm(quote)
        if len(q) < 8:
            continue
        hits.update(i for i, s in sentences.items() if q in s or (len(s) >= 8 and s in q))
    return sorted(hits)


@dataclass
class Sample:
    """The sampled pairs (ordered by annotation id) and how each stratum was drawn."""

    pairs: list[CriterionAnnotation]
    seed: int
    allocation: Allocation
    requested: int | None  # None means "all"
    strata: dict[str, dict[str, int]] = field(default_factory=dict)
    not_evaluable_ids: list[int] = field(default_factory=list)


def _balanced(sizes: Sequence[int], n: int) -> list[int]:
    """Equal shares, capped by stratum size, the rest spread over strata that still have rows."""
    alloc = [0] * len(sizes)
    remaining = min(n, sum(sizes))
    while remaining > 0:
        open_strata = [i for i, size in enumerate(sizes) if alloc[i] < size]
        share, extra = divmod(remaining, len(open_strata))
        for rank, i in enumerate(open_strata):
            give = min(share + (1 if rank < extra else 0), sizes[i] - alloc[i])
            alloc[i] += give
            remaining -= give
    return alloc


def _proportional(sizes: Sequence[int], n: int) -> list[int]:
    """Largest-remainder (Hamilton) allocation; ties go to the earlier stratum."""
    total = sum(sizes)
    n = min(n, total)
    if total == 0:
        return [0] * len(sizes)
    exact = [n * size / total for size in sizes]
    alloc = [int(x) for x in exact]
    by_remainder = sorted(range(len(sizes)), key=lambda i: (-(exact[i] - alloc[i]), i))
    for i in by_remainder[: n - sum(alloc)]:
        alloc[i] += 1
    return alloc


def stratified_sample(annotations: Sequence[CriterionAnnotation], n: int | None, seed: int,
                      allocation: Allocation = "balanced") -> Sample:
    """Draw `n` evaluable pairs stratified by the expert verdict (MET / NOT_MET / UNKNOWN).

    `balanced` gives each verdict an equal share (NOT_MET is only 3 % of the file, so a proportional
    sample of 60 would hold about two of them); `proportional` keeps the file's label mix, which makes
    the sample's accuracy an estimate of the file's. `n=None` takes every evaluable pair. The same
    annotations, n, seed and allocation always give the same sample."""
    if n is not None and n < 0:
        raise ValueError("sample size must be >= 0")
    evaluable = sorted((a for a in annotations if a.evaluable), key=lambda a: a.annotation_id)
    not_evaluable = sorted(a.annotation_id for a in annotations if not a.evaluable)
    by_label = {label: [a for a in evaluable if a.expert_label == label] for label in VERDICT_LABELS}
    sizes = [len(rows) for rows in by_label.values()]
    want = sum(sizes) if n is None else n
    counts = (_balanced if allocation == "balanced" else _proportional)(sizes, want)
    rng = random.Random(seed)
    pairs: list[CriterionAnnotation] = []
    strata: dict[str, dict[str, int]] = {}
    for (label, rows), k in zip(by_label.items(), counts, strict=True):
        pairs.extend(rng.sample(rows, k))
        strata[str(label)] = {"population": len(rows), "sampled": k}
    pairs.sort(key=lambda a: a.annotation_id)
    return Sample(pairs=pairs, seed=seed, allocation=allocation, requested=n, strata=strata,
                  not_evaluable_ids=not_evaluable)
