"""A conversation's model settings (spec: Trial Navigator "Per-Session Configuration"): which model
answers, how long an answer may be, whether long histories are trimmed. Stored on the conversation row,
so every worker's next turn reads them; None means "the app's default", which follows the settings."""

from __future__ import annotations

from sqlalchemy.orm import Session

from backend.agent.llm import LLM
from backend.conversations.schemas import (
    DEFAULT_MAX_TOKENS,
    MAX_MAX_TOKENS,
    MIN_MAX_TOKENS,
    ChatModels,
    ConfigAck,
    ConfigUpdate,
    ConversationConfig,
    ModelChoiceRead,
)
from backend.conversations.service import get_owned
from backend.db.models import Conversation
from backend.errors import InvalidInput


def effective(llm: LLM, conv: Conversation | None) -> ConversationConfig:
    """The settings the conversation's next turn uses (a new conversation: the defaults)."""
    choice = llm.choice(conv.model if conv is not None else None)
    return ConversationConfig(
        model=choice.id, model_label=choice.label, context_window=choice.context_window,
        max_tokens=(conv.max_tokens if conv is not None else None) or DEFAULT_MAX_TOKENS,
        compaction=conv.compaction if conv is not None else True)


def choices(llm: LLM) -> ChatModels:
    return ChatModels(models=[ModelChoiceRead(id=c.id, label=c.label, context_window=c.context_window)
                              for c in llm.choices],
                      default=effective(llm, None), max_tokens_range=(MIN_MAX_TOKENS, MAX_MAX_TOKENS),
                      demo=llm.mode == "demo")


def apply(llm: LLM, conv: Conversation, update: ConfigUpdate) -> None:
    """Store a `config_update` on the conversation; a model that is not offered is a 422."""
    if update.model is not None:
        if update.model not in {c.id for c in llm.choices}:
            offered = ", ".join(c.id for c in llm.choices)
            raise InvalidInput(f"Model {update.model!r} is not available; choose one of: {offered}.")
        conv.model = update.model
    if update.max_tokens is not None:
        conv.max_tokens = update.max_tokens
    if update.compaction is not None:
        conv.compaction = update.compaction


def read(s: Session, llm: LLM, user_id: int, conversation_id: int) -> ConversationConfig:
    return effective(llm, get_owned(s, user_id, conversation_id))


def update(s: Session, llm: LLM, user_id: int, conversation_id: int, body: ConfigUpdate) -> ConfigAck:
    conv = get_owned(s, user_id, conversation_id)
    apply(llm, conv, body)
    s.flush()
    return ConfigAck(conversation_id=conv.id, **effective(llm, conv).model_dump())
