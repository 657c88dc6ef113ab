"""AI column requests and the typed events of one column run (a discriminated union on `type`).

The service yields these; only the router turns them into Server-Sent Events (`backend.chat.sse`).
`to_data()` is the SSE `data` JSON and always carries `type`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from backend.agent.schemas import StreamFailed, WireEvent
from backend.ai_columns.evidence import Qualifier, Section
from backend.sources.models import normalize_nct_id, normalize_pmid
from backend.text import looks_like_formula

MAX_IDS = 500
NAME_PATTERN = r"^\s*[^\s=+@-]"  # something besides spaces, and not a formula's first character
MAX_ITEMS_BYTES = 2_000_000
App = Literal["trialscout", "tablizer"]
ColumnType = Literal["boolean", "text"]
ID_KEY: dict[str, str] = {"trialscout": "nct_id", "tablizer": "pmid"}


class AiColumn(BaseModel):
    """A column as the user defined it: `criteria` is a yes/no statement (boolean) or a question (text)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, frozen=True)

    name: str = Field(min_length=1, max_length=200, json_schema_extra={"pattern": NAME_PATTERN},
                      description="Not starting like a spreadsheet formula (=, +, -, @): it heads exported columns")
    criteria: str = Field(min_length=1, max_length=4000)
    type: ColumnType

    @field_validator("name")
    @classmethod
    def _not_a_formula(cls, value: str) -> str:
        if looks_like_formula(value):
            raise ValueError(f"an AI column's name can't start with {value[0]!r}: a spreadsheet would run the "
                             "exported column's heading as a formula")
        return value


class EvaluateRequest(BaseModel):
    """`ids` are the loaded rows (NCT ids for TrialScout, PMIDs for Tablizer), normalized and de-duplicated
    in order. `items` are optional staged row summaries, used as the document when the source does not
    have a row's record."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    column: AiColumn
    app: App
    ids: list[str] = Field(min_length=1, max_length=MAX_IDS)
    items: list[dict[str, Any]] | None = Field(None, max_length=MAX_IDS)

    @field_validator("ids", mode="before")
    @classmethod
    def _pmids_may_be_numbers(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in value]
        return value

    @field_validator("items")
    @classmethod
    def _bounded(cls, value: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        if value is not None and len(json.dumps(value, default=str)) > MAX_ITEMS_BYTES:
            raise ValueError(f"items are larger than {MAX_ITEMS_BYTES} bytes; send summaries, not records")
        return value

    @model_validator(mode="after")
    def _ids_fit_the_app(self) -> EvaluateRequest:
        normalize = normalize_nct_id if self.app == "trialscout" else normalize_pmid
        kind = "NCT ids" if self.app == "trialscout" else "PMIDs"
        ids, bad = [], []
        for raw in self.ids:
            try:
                ids.append(normalize(raw))
            except ValueError:
                bad.append(raw)
        if bad:
            shown = ", ".join(repr(b) for b in bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
            raise ValueError(f"{self.app} rows are identified by {kind}; not valid: {shown}")
        self.ids = list(dict.fromkeys(ids))
        key = ID_KEY[self.app]
        for i, item in enumerate(self.items or []):
            given = item.get(key)
            try:
                item_id = normalize(str(given)) if given is not None else None
            except ValueError:
                item_id = None
            if item_id is None or item_id not in self.ids:
                raise ValueError(f"items[{i}] must carry a {key!r} that is one of ids (got {given!r})")
        return self

    def staged(self) -> dict[str, dict[str, Any]]:
        """The staged summaries by normalized id."""
        key = ID_KEY[self.app]
        normalize = normalize_nct_id if self.app == "trialscout" else normalize_pmid
        return {normalize(str(item[key])): item for item in self.items or []}


# ---- events -----------------------------------------------------------------------------------------

class ColumnProgress(WireEvent):
    done: int
    total: int
    type: Literal["progress"] = "progress"


class RowEvaluated(WireEvent):
    """value: MET | NOT_MET | UNKNOWN for boolean columns, the extracted text (or None) for text columns.
    `sections[i]` is where the server found `evidence[i]` in the record (None: not in it); `qualifier` marks a
    boolean Yes/No that holds only in part (`conditional`) or that the record does not back (`needs_review`),
    see `backend.ai_columns.evidence`. `display` carries it too ("Yes · conditional")."""

    id: str
    value: str | None
    display: str
    reasoning: str
    evidence: list[str]
    sections: list[Section | None] = Field(default_factory=list)
    qualifier: Qualifier | None = None
    cached: bool
    model: str
    parse_error: str | None = None  # why the model's reply was unusable (then value is UNKNOWN / None)
    type: Literal["row"] = "row"


class RowFailed(WireEvent):
    id: str
    message: str
    retryable: bool = False
    type: Literal["row_error"] = "row_error"


class ColumnCompleted(WireEvent):
    done: int
    total: int
    # yes, no (both unqualified), conditional, needs_review, unknown, answered (text rows with an answer), error
    counts: dict[str, int]
    cached: int  # rows served from the cache
    model: str
    type: Literal["complete"] = "complete"


class ColumnFailed(StreamFailed):
    pass


ColumnEvent = ColumnProgress | RowEvaluated | RowFailed | ColumnCompleted | ColumnFailed


@dataclass
class Tally:
    column_type: ColumnType
    yes: int = 0
    no: int = 0
    conditional: int = 0
    needs_review: int = 0
    unknown: int = 0
    answered: int = 0
    error: int = 0
    cached: int = 0
    seen: set[str] = field(default_factory=set)

    def add(self, event: RowEvaluated | RowFailed) -> None:
        self.seen.add(event.id)
        if isinstance(event, RowFailed):
            self.error += 1
            return
        self.cached += event.cached
        if self.column_type == "text":
            if event.value is None:
                self.unknown += 1
            else:
                self.answered += 1
        elif event.qualifier is not None:
            setattr(self, event.qualifier, getattr(self, event.qualifier) + 1)
        elif event.value == "MET":
            self.yes += 1
        elif event.value == "NOT_MET":
            self.no += 1
        else:
            self.unknown += 1

    @property
    def done(self) -> int:
        return len(self.seen)

    def counts(self) -> dict[str, int]:
        return {"yes": self.yes, "no": self.no, "conditional": self.conditional, "needs_review": self.needs_review,
                "unknown": self.unknown, "answered": self.answered, "error": self.error}
