from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from backend.agent.schemas import Decision, PublicExtras
from backend.db.ids import DbId

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


class ConversationDetail(ConversationRead):
    messages: list[MessageRead]


class ConversationUpdate(BaseModel):
    title: str = Field(min_length=1, max_length=255)

    @field_validator("title")
    @classmethod
    def _strip(cls, value: str) -> str:
        value = " ".join(value.split())
        if not value:
            raise ValueError("title must not be blank")
        return value


class RewindCreate(BaseModel):
    """The user message to send again: it and every later message are dropped."""

    message_id: DbId


class DecisionCreate(BaseModel):
    decision: Decision
