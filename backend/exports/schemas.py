"""What leaves the app: a results table (CSV, XLSX), a conversation (Markdown, HTML) and a shortlist report
(HTML, PDF), with the events of a report's build.

The page sends the table as the user sees it (its columns, its rows in their filtered and sorted order);
the AI columns' verdicts, reasoning and evidence come from the server's own store of the user's results,
so an export can only carry what that user's runs produced.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.json_schema import JsonDict

from backend.agent.schemas import StreamFailed, WireEvent
from backend.ai_columns.schemas import ID_KEY, AiColumn, App

MAX_ROWS = 5000
MAX_REPORT_ROWS = 500
MAX_CELL = 20_000
MAX_REPORT_CELL = 2_000  # a report lays every cell out on a page: it keeps at most this much of one

Cell = str | int | float | bool | list[str] | None


def text_of(value: Cell) -> str:
    """A cell as the files show it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, list):
        return "; ".join(str(v) for v in value)
    return str(value)


class TableColumn(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    key: str = Field(min_length=1, max_length=64)
    label: str = Field(min_length=1, max_length=200)


# A row's id as the API document states it: present, and not null, blank or an empty list.
_ID_CELL: JsonDict = {"not": {"anyOf": [{"type": "null"}, {"type": "string", "pattern": "^\\s*$"},
                              {"type": "array", "maxItems": 0}]}}
_ROWS_HAVE_IDS: JsonDict = {"allOf": [
    {"if": {"properties": {"app": {"const": app}}, "required": ["app"]},
     "then": {"properties": {"rows": {"items": {"required": [key], "properties": {key: _ID_CELL}}}}}}
    for app, key in ID_KEY.items()]}


class TableRequest(BaseModel):
    """A results table as shown: `columns` in display order, `rows` in display order (filters and sort
    applied), each row carrying the app's id key (`pmid` or `nct_id`)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_ROWS_HAVE_IDS)

    app: App
    columns: list[TableColumn] = Field(min_length=1, max_length=40)
    rows: list[dict[str, Cell]] = Field(max_length=MAX_ROWS)
    ai_columns: list[AiColumn] = Field(default_factory=list, max_length=20)

    @field_validator("rows")
    @classmethod
    def _cells_bounded(cls, rows: list[dict[str, Cell]]) -> list[dict[str, Cell]]:
        for i, row in enumerate(rows):
            for key, value in row.items():
                text = " ".join(value) if isinstance(value, list) else value
                if isinstance(text, str) and len(text) > MAX_CELL:
                    raise ValueError(f"rows[{i}].{key} is longer than {MAX_CELL} characters")
        return rows

    @model_validator(mode="after")
    def _rows_have_ids(self) -> TableRequest:
        key = ID_KEY[self.app]
        missing = [i for i, row in enumerate(self.rows) if row.get(key) is None or not text_of(row[key]).strip()]
        if missing:
            raise ValueError(f"every row needs its {key!r}; rows {missing[:5]} have none")
        return self


class ChartPoint(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str = Field(max_length=200)
    value: float = Field(ge=0)


class ReportChart(BaseModel):
    """A chart of the page's panel as its figures: the report draws it itself (no browser needed)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    title: str = Field(min_length=1, max_length=200)
    kind: str = Field("bar", max_length=32)
    points: list[ChartPoint] = Field(min_length=1, max_length=60)


class ReportRequest(TableRequest):
    """A shortlist: the selected rows with the AI columns, the pinned charts and the assistant's summary:
    `summary` (Markdown) when given; else, with `include_answer`, the newest complete answer of
    `conversation_id`, or of the user's most recent conversation on this app."""

    title: str = Field(min_length=1, max_length=200)
    query: str | None = Field(None, max_length=2000)  # what the page searched, as the user would say it
    columns: list[TableColumn] = Field(min_length=1, max_length=24)
    rows: list[dict[str, Cell]] = Field(min_length=1, max_length=MAX_REPORT_ROWS)
    ai_columns: list[AiColumn] = Field(default_factory=list, max_length=10)
    charts: list[ReportChart] = Field(default_factory=list, max_length=12)
    summary: str | None = Field(None, max_length=50_000)
    conversation_id: int | None = Field(None, ge=1)
    include_answer: bool = True


class ReportRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    app: App
    title: str
    row_count: int
    html_url: str
    pdf_url: str


# ---- a report's build, streamed -------------------------------------------------------------------------

class ReportProgress(WireEvent):
    step: str
    done: int
    total: int
    type: Literal["report_progress"] = "report_progress"


class ReportReady(WireEvent):
    """The spec's `report_ready`: the report is stored and can be opened."""

    report: ReportRead
    type: Literal["report_ready"] = "report_ready"


class ReportFailed(StreamFailed):
    pass


ReportEvent = ReportProgress | ReportReady | ReportFailed
