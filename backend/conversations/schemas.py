from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from backend.agent.schemas import Decision, PublicExtras
from backend.db.ids import DbId

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ufeff]")
MIN_MAX_TOKENS, MAX_MAX_TOKENS = 256, 64_000  # an answer's length limit; 64k is Sonnet's and Haiku's output cap
DEFAULT_MAX_TOKENS = 16_384

App = Literal["kh", "tablizer", "trialscout"]  # the product a conversation belongs to (kh: stream editor)


class ConversationRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    app: App
    title: str | None
    created_at: datetime
    updated_at: datetime


class MessageRead(BaseModel):
    id: int
    role: str
    content: str
    context: dict[str, Any] | None
    extras: PublicExtras
    status: str
    created_at: datetime


class VersionsRead(BaseModel):
    """A fork on the active path: the message where earlier versions of the conversation's tail branch off
    (regenerate, edit), which version is shown (1-based) and how many there are."""

    message_id: int
    current: int
    count: int


class ConversationDetail(ConversationRead):
    messages: list[MessageRead]
    versions: list[VersionsRead] = []  # forks on the active path, in the order of their messages


class ConversationUpdate(BaseModel):
    # Something printable besides spaces (control characters are dropped, runs of spaces made one).
    title: str = Field(min_length=1, max_length=255, pattern=r"[^\s\x00-\x1f\x7f-\x9f\ufeff]")

    @field_validator("title", mode="before")
    @classmethod
    def _strip(cls, value: object) -> object:
        if not isinstance(value, str):
            return value
        return " ".join(CONTROL.sub(" ", value).split())


class RewindCreate(BaseModel):
    """The user message to send again: it and every later message become an earlier version."""

    message_id: DbId


class VersionSwitch(BaseModel):
    """Show another version of the tail that starts at `message_id` (a message with `versions`)."""

    message_id: DbId
    version: int = Field(ge=1)


class DecisionCreate(BaseModel):
    decision: Decision


class ConfigUpdate(BaseModel):
    """`config_update`: change a conversation's model settings; fields left out keep their value. The
    next turn uses them (a running turn keeps the settings it started with)."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(default=None, min_length=1, max_length=100)
    max_tokens: int | None = Field(default=None, ge=MIN_MAX_TOKENS, le=MAX_MAX_TOKENS)
    compaction: bool | None = None


class ConversationConfig(BaseModel):
    """A conversation's model settings as its next turn will use them."""

    model: str
    model_label: str
    max_tokens: int
    compaction: bool  # trim long histories (on) or send them whole until the window fills (off)
    context_window: int


class ConfigAck(ConversationConfig):
    """`config_ack`: the settings applied by a `config_update`."""

    type: Literal["config_ack"] = "config_ack"
    conversation_id: int


class ModelChoiceRead(BaseModel):
    id: str
    label: str
    context_window: int


class ChatModels(BaseModel):
    """What a conversation may choose from (`GET /api/chat/models`) and the defaults of a new one."""

    models: list[ModelChoiceRead]
    default: ConversationConfig
    max_tokens_range: tuple[int, int]
    demo: bool
