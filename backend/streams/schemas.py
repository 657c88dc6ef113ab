"""Shapes of the streams API, and the one text cleaner every stream write (and the chat's draft) goes through.

Cleaning, not rejecting: control characters are removed (newline and tab survive in multi-line fields,
CRLF becomes LF), surrounding whitespace is trimmed; only a text still too long, or a required name left
empty, is a 422 whose `msg` says which field, how long and what the limit is.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, field_validator, model_validator
from pydantic_core import PydanticCustomError

from backend.db.ids import DbId
from backend.sources.models import TrialSearchParams

MAX_NAME = 200
MAX_DESCRIPTION = 4_000
MAX_INSTRUCTIONS = 10_000
MAX_NOTE = 500
MAX_PUBMED_QUERY = 2_000

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C0 except tab and newline, DEL, C1


def clean_text(value: str, field: str, limit: int, multiline: bool = True) -> str:
    """The text as stored: controls stripped, trimmed. ValueError (with a sentence for people) when too long."""
    text = value.replace("\r\n", "\n").replace("\r", "\n")
    if multiline:
        text = _CONTROL.sub("", text).strip()
    else:
        text = " ".join(_CONTROL.sub("", text).split())
    if len(text) > limit:
        raise ValueError(f"{field} is {len(text):,} characters long; the limit is {limit:,}.")
    return text


def _checked(value: str | None, field: str, limit: int, multiline: bool = True) -> str | None:
    """`clean_text` for pydantic validators: a 422 whose msg is the sentence itself (no "Value error,")."""
    if value is None:
        return None
    try:
        return clean_text(value, field, limit, multiline) or None
    except ValueError as exc:
        raise PydanticCustomError("text_too_long", str(exc)) from None


def _name(value: str | None) -> str:
    name = _checked(value, "name", MAX_NAME, multiline=False)
    if not name:
        raise PydanticCustomError("name_empty", "name must not be empty.")
    return name


class StreamSettings(BaseModel):
    """A stream's defaults for the pages: Tablizer's PubMed query and TrialScout's search form."""

    model_config = ConfigDict(extra="forbid")

    pubmed_query: str | None = None
    trial_search: TrialSearchParams | None = None  # the same fields (and checks) as GET /api/trials/search

    @field_validator("pubmed_query")
    @classmethod
    def _query(cls, value: str | None) -> str | None:
        return _checked(value, "pubmed_query", MAX_PUBMED_QUERY, multiline=False)

    def stored(self) -> dict[str, Any] | None:
        out: dict[str, Any] = {}
        if self.pubmed_query:
            out["pubmed_query"] = self.pubmed_query
        if self.trial_search is not None:
            search = self.trial_search.model_dump(mode="json", exclude_defaults=True, exclude={"page_token"})
            if search:
                out["trial_search"] = search
        return out or None


class _Body(BaseModel):
    # An unknown key is a typo ("instructions" for "chat_instructions"): a 422, never silently dropped.
    model_config = ConfigDict(extra="forbid")

    @field_validator("description", check_fields=False)
    @classmethod
    def _description(cls, value: str | None) -> str | None:
        return _checked(value, "description", MAX_DESCRIPTION)

    @field_validator("chat_instructions", check_fields=False)
    @classmethod
    def _instructions(cls, value: str | None) -> str | None:
        return _checked(value, "chat_instructions", MAX_INSTRUCTIONS)

    @field_validator("note", check_fields=False)
    @classmethod
    def _note(cls, value: str | None) -> str | None:
        return _checked(value, "note", MAX_NOTE, multiline=False)


# The limits as the API document states them (the validators clean the text first: controls out, trimmed).
_PRINTABLE = r"[^\s\x00-\x1f\x7f-\x9f]"
NAME = Field(json_schema_extra={"minLength": 1, "maxLength": MAX_NAME, "pattern": _PRINTABLE})
DESCRIPTION = Field(None, json_schema_extra={"maxLength": MAX_DESCRIPTION})
INSTRUCTIONS = Field(None, json_schema_extra={"maxLength": MAX_INSTRUCTIONS})
NOT_NULL_NAME = WithJsonSchema({"type": "string", "minLength": 1, "maxLength": MAX_NAME, "pattern": _PRINTABLE})


class StreamCreate(_Body):
    name: str = NAME
    description: str | None = DESCRIPTION
    chat_instructions: str | None = INSTRUCTIONS
    note: str | None = None
    settings: StreamSettings | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _name(value)


class StreamUpdate(_Body):
    """Only the keys sent are changed. `chat_instructions: null` or "" clears them (a new version too);
    `settings` replaces the whole settings object; `note` goes with an instructions change."""

    name: Annotated[str | None, NOT_NULL_NAME] = None  # absent or a name, never null (the validators say so)
    description: str | None = DESCRIPTION
    chat_instructions: str | None = INSTRUCTIONS
    note: str | None = Field(None, json_schema_extra={"maxLength": MAX_NOTE})
    settings: StreamSettings | None = None
    archived: Annotated[bool | None, WithJsonSchema({"type": "boolean"})] = None
    expected_version_id: DbId | None = None  # optimistic lock: 409 if someone saved a newer version first

    @field_validator("name")
    @classmethod
    def _name(cls, value: str | None) -> str:
        return _name(value)

    @model_validator(mode="after")
    def _consistent(self) -> StreamUpdate:
        for key in ("name", "archived"):
            if key in self.model_fields_set and getattr(self, key) is None:
                raise PydanticCustomError("not_nullable", "{key} cannot be null.", {"key": key})
        if self.note and "chat_instructions" not in self.model_fields_set:
            raise PydanticCustomError("note_alone", "note describes an instructions change; send it with "
                                                    "chat_instructions.")
        return self


class InstructionRestore(_Body):
    version_id: DbId
    note: str | None = None


class StreamSummary(BaseModel):
    """A stream as every signed-in user sees it: enough to pick it and load its page defaults."""

    id: int
    name: str
    description: str | None
    settings: dict[str, Any]
    archived: bool
    created_at: datetime
    updated_at: datetime


class StreamRead(StreamSummary):
    """A stream as admins see it: also its chat instructions and who changed it (least privilege: a plain
    user needs neither, and the instructions may say more than the stream's name)."""

    chat_instructions: str | None
    updated_by: str | None  # username
    current_version_id: int | None  # the newest InstructionVersion, i.e. the saved instructions
    current_version_number: int | None  # that version's number within this stream (1, 2, 3…): "v3"
    version_count: int


class VersionRead(BaseModel):
    id: int  # names the version in the API (restore, diff, expected_version_id)
    number: int  # 1, 2, 3… within its stream: what people read ("v2")
    stream_id: int
    text: str | None
    note: str | None
    created_by: str | None  # username; null when the user was deleted or the version was seeded
    created_at: datetime
    current: bool


class DiffLine(BaseModel):
    op: Literal["context", "add", "remove"]
    text: str
    old_line: int | None  # 1-based line in from_version's text
    new_line: int | None  # 1-based line in to_version's text


class DiffRead(BaseModel):
    stream_id: int
    from_version: VersionRead | None  # null: compared with empty text (to_version is the first version)
    to_version: VersionRead | None
    unified: str  # difflib.unified_diff, 3 lines of context; "" when the texts are equal
    lines: list[DiffLine]  # every line of both texts, in order
    added: int
    removed: int
