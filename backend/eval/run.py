"""The shapes of one criterion eval run, shared by the harness that runs it and the artifacts that record
it: its configuration (with the budget), each sampled pair's outcome, and the finished report."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from backend.criteria.evaluator import DEFAULT_MAX_TOKENS, CallUsage, CriterionVerdict
from backend.eval.dataset import ANNOTATIONS_PATH, Allocation, CriterionAnnotation, Sample

ModelKind = Literal["demo", "claude"]


@dataclass(frozen=True)
class Budget:
    """Caps on one run. None means no cap. Token use is known only when a call returns, so calls already
    in flight when the token cap is reached still finish (at most `concurrency` of them)."""

    max_calls: int | None = None
    max_tokens: int | None = None


@dataclass
class PairOutcome:
    pair_index: int
    annotation: CriterionAnnotation
    status: Literal["evaluated", "error", "skipped"]
    verdict: CriterionVerdict | None = None
    usage: CallUsage | None = None
    reason: str | None = None  # why it errored or was skipped

    @property
    def correct(self) -> bool | None:
        return None if self.verdict is None else self.verdict.label == self.annotation.expert_label


@dataclass(frozen=True)
class EvalConfig:
    model_kind: ModelKind
    model: str
    sample_size: int | None = 60  # None: every evaluable pair
    seed: int = 42
    allocation: Allocation = "balanced"
    concurrency: int = 4
    budget: Budget = field(default_factory=Budget)
    max_output_tokens: int = DEFAULT_MAX_TOKENS
    out_dir: Path = Path("runs")
    annotations_path: Path = ANNOTATIONS_PATH
    model_backend: str = ""  # how the client reaches the model, for config.json


@dataclass
class RunReport:
    run_id: str
    run_dir: Path
    sample: Sample
    outcomes: list[PairOutcome]
    metrics: dict[str, Any]
    cost_summary: dict[str, Any]
    config: dict[str, Any]
