"""The typed shapes of screening: the patient, the request, criteria and their results, a screened trial,
the prescreen trace, usage, the events `screen()` yields and the judgement cache it reads and writes.

Everything here is data (pydantic, no behaviour beyond small derived values) so the API layer can store
and send it as JSON (`model_dump(mode="json")`) and read it back (`model_validate`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Annotated, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator

from backend.criteria.labels import Verdict
from backend.sources.models import OverallStatus

MAX_NOTE_CHARS = 20_000  # a long discharge summary fits; a pasted chart does not
DEFAULT_CANDIDATES = 20
MAX_CANDIDATES = 100

CriterionKind = Literal["inclusion", "exclusion"]
OPEN_STATUSES: tuple[OverallStatus, ...] = ("RECRUITING", "NOT_YET_RECRUITING")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


# ---- the patient ------------------------------------------------------------------------------------

class KeyFacts(_Frozen):
    """What a screener reads off a note before looking at any trial. Every list may be empty."""

    stage: str | None = None  # e.g. "IV", "metastatic", "locally advanced"
    biomarkers: list[str] = Field(default_factory=list)  # e.g. "HER2-positive", "EGFR exon 19 deletion"
    prior_therapies: list[str] = Field(default_factory=list)  # received and stopped: never a search target
    current_therapies: list[str] = Field(default_factory=list)
    comorbidities: list[str] = Field(default_factory=list)
    performance_status: str | None = None  # e.g. "ECOG 1"
    labs: list[str] = Field(default_factory=list)  # as written, e.g. "creatinine 2.1 mg/dL"
    location: str | None = None


class PatientProfile(_Frozen):
    """INGEST's output, editable by the user (an edit makes a new note version)."""

    age: float | None = Field(None, ge=0, le=130, description="Years; a 6-month-old is 0.5")
    sex: Literal["female", "male"] | None = None
    conditions: list[str] = Field(default_factory=list, description="Main condition first")
    key_facts: KeyFacts = Field(default_factory=KeyFacts)
    keywords: list[str] = Field(default_factory=list, description="Search terms for the wanted trials")
    summary: str = ""  # one line, e.g. "62-year-old woman with HER2-positive metastatic breast cancer"
    language: str | None = Field(None, description="ISO 639-1 code of the note's language, when INGEST could tell")
    warnings: list[str] = Field(default_factory=list, description="What INGEST could not read, e.g. a note "
                                                                  "in a language the offline rules do not read")


class NoteSentence(_Frozen):
    index: int  # 0-based, as in the TrialGPT data ("0. A 58-year-old woman …")
    text: str


def check_note(value: str) -> str:
    """A note's validator, for the engine's input and the patient API's alike: one with only white space is
    refused. The message names the problem, never the text: a 422 body must not echo health data."""
    if not value.strip():
        raise ValueError("the note is empty")
    return value


class PatientInput(_Frozen):
    """What `screen()` is given about the patient. `version` identifies this note + profile (the API's note
    version id, or a content hash): cached judgements are reused only for the same version."""

    note: str = Field(min_length=1, max_length=MAX_NOTE_CHARS)
    profile: PatientProfile | None = None  # None: INGEST runs first and the `profile` event carries it
    version: str = Field(min_length=1, max_length=200)

    _note_ok = field_validator("note")(check_note)


def note_version(note: str, profile: PatientProfile | None = None) -> str:
    """A content hash for callers without a stored version id (the benchmark, tests)."""
    payload = note + "\n" + (profile.model_dump_json() if profile else "")
    return "sha256:" + hashlib.sha256(payload.encode()).hexdigest()[:32]


# ---- the request ------------------------------------------------------------------------------------

class ScreenRequest(_Frozen):
    """Either search from the profile (`nct_ids` empty) or screen exactly these trials ("screen these").
    A request body: an unknown field is a 422, not silently dropped (a misspelt `nct_id` would screen
    trials searched from the profile instead of the ones named)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    nct_ids: list[str] = Field(default_factory=list, max_length=MAX_CANDIDATES)
    n: int = Field(DEFAULT_CANDIDATES, ge=1, le=MAX_CANDIDATES, description="Candidates kept after search")
    max_tool_calls: int = Field(8, ge=1, le=30, description="The prescreen's search budget")
    status: list[OverallStatus] = Field(default_factory=lambda: list(OPEN_STATUSES),
                                        description="Statuses searched when the model names none; [] = any")

    @field_validator("nct_ids")
    @classmethod
    def _normalize(cls, values: list[str]) -> list[str]:
        out: list[str] = []
        for value in values:
            key = value.strip().upper()
            if not (key.startswith("NCT") and key[3:].isdigit() and len(key) == 11):
                raise ValueError(f"{value!r} is not an NCT id (NCT followed by 8 digits)")
            if key not in out:
                out.append(key)
        return out

    @property
    def mode(self) -> Literal["search", "nct_ids"]:
        return "nct_ids" if self.nct_ids else "search"


# ---- prescreen --------------------------------------------------------------------------------------

class ToolCallRecord(_Frozen):
    call_index: int
    tool_name: str  # "search_trials" | "get_trial_details"
    args: dict[str, object]
    result_summary: str = ""
    result_count: int = 0
    latency_ms: float = 0.0
    error: str | None = None


class Candidate(_Frozen):
    nct_id: str
    title: str
    status: str | None = None
    phase: list[str] = Field(default_factory=list)
    conditions: list[str] = Field(default_factory=list)
    interventions: list[str] = Field(default_factory=list)
    found_by_queries: list[str] = Field(default_factory=list)  # the labels of the searches that found it
    heuristic_score: float = 0.0  # spec §1: query_count*3 + phase + recruiting + details bonuses
    relevance: float = 0.0  # 0..1, how well the trial's topic matches the patient's conditions


# ---- criteria and verdicts --------------------------------------------------------------------------

class Criterion(_Frozen):
    kind: CriterionKind
    index: int  # 0-based within its kind, in the order of the eligibility text
    text: str


class CriterionResult(_Frozen):
    """One criterion judged against the note. `label` is read from the patient's side (the spec's label
    map: "included" and "not excluded" are MET, "not included" and "excluded" NOT_MET, "not enough
    information" and "not applicable" UNKNOWN): a NOT_MET exclusion criterion is one that applies."""

    criterion: Criterion
    label: Verdict
    reasoning: str = ""
    evidence: list[int] = Field(default_factory=list)  # note sentence indices
    cached: bool = False
    error: str | None = None  # why the label is UNKNOWN when the reply was unusable


class TrialVerdict(StrEnum):
    ELIGIBLE = "ELIGIBLE"
    EXCLUDED = "EXCLUDED"
    UNCERTAIN = "UNCERTAIN"
    NOT_RELEVANT = "NOT_RELEVANT"


class ScreenedTrial(_Frozen):
    nct_id: str
    title: str
    verdict: TrialVerdict
    score: float  # the ranking score, higher first (see `backend.screening.verdict`)
    relevance: float = 0.0
    met: int = 0
    not_met: int = 0
    unknown: int = 0
    criteria: list[CriterionResult] = Field(default_factory=list)
    snapshot_date: str | None = None  # when the offline record was copied; None when live
    reason: str | None = None  # e.g. "The trial record has no eligibility criteria text."
    found_by_queries: list[str] = Field(default_factory=list)


# ---- usage ------------------------------------------------------------------------------------------

class Usage(_Frozen):
    model: str = ""
    model_calls: int = 0
    input_tokens: int = 0  # uncached + cache writes + cache reads
    output_tokens: int = 0
    cache_read_tokens: int = 0
    estimated_cost_usd: float | None = None  # None when the model has no list price (the demo model: 0)


# ---- events -----------------------------------------------------------------------------------------

class ProfileEvent(_Frozen):
    type: Literal["profile"] = "profile"
    profile: PatientProfile
    sentences: list[NoteSentence]
    extracted: bool  # False when the caller passed the profile


class CandidatesEvent(_Frozen):
    type: Literal["candidates"] = "candidates"
    mode: Literal["search", "nct_ids"]
    candidates: list[Candidate]
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)  # NCT ids asked for that no source has


class TrialEvent(_Frozen):
    type: Literal["trial"] = "trial"
    trial: ScreenedTrial
    done: int  # trials screened so far, this one included
    total: int
    usage: Usage = Field(default_factory=Usage)  # the screening's so far (cumulative), this trial's calls included


class ErrorEvent(_Frozen):
    """`fatal`: the screening stops here (the trials already yielded stand). Otherwise one trial failed
    (`nct_id`) and the screening goes on."""

    type: Literal["error"] = "error"
    code: str  # "source_unavailable" | "trial_not_found" | "model_error" | "internal_error" | …
    message: str  # never contains note text
    retryable: bool = False
    fatal: bool = True
    nct_id: str | None = None
    usage: Usage = Field(default_factory=Usage)  # the screening's so far (cumulative)


class DoneEvent(_Frozen):
    type: Literal["done"] = "done"
    ranking: list[str]  # NCT ids of the screened trials, best first
    usage: Usage
    elapsed_ms: float = 0.0


ScreeningEvent = Annotated[ProfileEvent | CandidatesEvent | TrialEvent | ErrorEvent | DoneEvent,
                           Field(discriminator="type")]


# ---- the judgement cache ----------------------------------------------------------------------------

class JudgementKey(_Frozen):
    note_version: str
    nct_id: str
    criterion_hash: str  # `criterion_hash(criterion)`: kind + whitespace-normalised text + prompt version
    model: str


class Judgement(_Frozen):
    """What is cached for one criterion: enough to rebuild its `CriterionResult`."""

    label: Verdict
    reasoning: str = ""
    evidence: list[int] = Field(default_factory=list)


@runtime_checkable
class JudgementCache(Protocol):
    """Usable judgements only (an unusable reply is never stored). Both methods may raise; the engine then
    goes on without the cache (a cache is a shortcut, not a source of truth)."""

    async def get(self, keys: Sequence[JudgementKey]) -> Mapping[JudgementKey, Judgement]: ...

    async def put(self, items: Sequence[tuple[JudgementKey, Judgement]]) -> None: ...


class MemoryJudgementCache:
    """A process-local `JudgementCache` (tests, the benchmark)."""

    def __init__(self) -> None:
        self.items: dict[JudgementKey, Judgement] = {}

    async def get(self, keys: Sequence[JudgementKey]) -> Mapping[JudgementKey, Judgement]:
        return {k: self.items[k] for k in keys if k in self.items}

    async def put(self, items: Sequence[tuple[JudgementKey, Judgement]]) -> None:
        self.items.update(items)
