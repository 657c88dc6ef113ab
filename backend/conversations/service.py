"""Conversation CRUD, always scoped to the user: another user's conversation does not exist (404)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from backend.agent.schemas import Card, Decision, MessageExtras, PublicExtras
from backend.conversations import versions
from backend.conversations.schemas import ConversationDetail, ConversationRead, MessageRead
from backend.db.base import utcnow
from backend.db.models import Conversation, Message
from backend.errors import Conflict, NotFound


def get_owned(s: Session, user_id: int, conversation_id: int) -> Conversation:
    conv = s.get(Conversation, conversation_id)
    if conv is None or conv.user_id != user_id:
        raise NotFound(f"Conversation {conversation_id} not found.")
    return conv


def list_for(s: Session, user_id: int, app: str, limit: int = 100) -> list[ConversationRead]:
    rows = s.scalars(
        select(Conversation)
        .where(Conversation.user_id == user_id, Conversation.app == app)
        .order_by(Conversation.updated_at.desc(), Conversation.id.desc())
        .limit(limit)
    )
    return [ConversationRead.model_validate(c) for c in rows]


def message_read(m: Message) -> MessageRead:
    # The raw API blocks are for rebuilding history, not for the page: PublicExtras leaves them out.
    extras = PublicExtras.model_validate(m.extras or {})
    return MessageRead(id=m.id, role=m.role, content=m.content, context=m.context, extras=extras,
                       status=m.status, created_at=m.created_at)


def detail(s: Session, user_id: int, conversation_id: int) -> ConversationDetail:
    conv = get_owned(s, user_id, conversation_id)
    return ConversationDetail(
        **ConversationRead.model_validate(conv).model_dump(),
        messages=[message_read(m) for m in conv.messages], versions=versions.forks(s, conv))


def rename(s: Session, user_id: int, conversation_id: int, title: str) -> ConversationRead:
    conv = get_owned(s, user_id, conversation_id)
    conv.title = title
    conv.updated_at = utcnow()
    s.flush()
    return ConversationRead.model_validate(conv)


def delete(s: Session, user_id: int, conversation_id: int) -> None:
    s.delete(get_owned(s, user_id, conversation_id))


def _idle(s: Session, user_id: int, conversation_id: int) -> Conversation:
    # Locked (on PostgreSQL) until the change commits: a turn's claim, another rewind or switch waits for it.
    conv = s.get(Conversation, conversation_id, with_for_update=True)
    if conv is None or conv.user_id != user_id:
        raise NotFound(f"Conversation {conversation_id} not found.")
    if conv.active_turn_id is not None and conv.active_turn_expires_at and conv.active_turn_expires_at > utcnow():
        raise Conflict("A turn is running in this conversation; stop it or wait for it to end.")
    return conv


def rewind(s: Session, user_id: int, conversation_id: int, message_id: int) -> ConversationDetail:
    """Set a user message and everything after it aside as an earlier version, so the tray can send it again
    (edited, or as it was to regenerate the answer). What stays ends with an answer, so the history is still
    one the Messages API accepts; the set-aside turns' records go, so their idempotency keys start new turns."""
    conv = _idle(s, user_id, conversation_id)
    message = s.get(Message, message_id)
    if message is None or message.conversation_id != conv.id or message.role != "user":
        raise NotFound(f"Message {message_id} not found in conversation {conversation_id}.")
    versions.archive_tail(s, conv, versions.position_of(conv, message_id))
    conv.updated_at = utcnow()
    s.flush()
    return detail(s, user_id, conversation_id)


def switch_version(s: Session, user_id: int, conversation_id: int, message_id: int,
                   version: int) -> ConversationDetail:
    """Show another version of the tail that starts at `message_id`; the one shown now is kept as a version."""
    conv = _idle(s, user_id, conversation_id)
    position = versions.position_of(conv, message_id)
    shown = next((f for f in versions.forks(s, conv) if f.message_id == message_id), None)
    if shown is None or shown.current != version:
        versions.restore(s, conv, position, version)
        conv.updated_at = utcnow()
        s.flush()
    return detail(s, user_id, conversation_id)


def record_decision(s: Session, user_id: int, conversation_id: int, payload_id: str,
                    decision: Decision) -> Card:
    """Mark a card accepted/dismissed on the message that carries it; the next turn tells the model."""
    get_owned(s, user_id, conversation_id)
    rows = s.scalars(select(Message).where(Message.conversation_id == conversation_id,
                                           Message.role == "assistant"))
    for message in rows:
        extras = MessageExtras.model_validate(message.extras or {})
        for card in extras.payloads:
            if card.id == payload_id:
                card.decision = decision
                card.decided_at = utcnow().isoformat()
                # A new value, so SQLAlchemy sees the JSON change.
                message.extras = extras.model_dump(mode="json")
                return card
    raise NotFound(f"Payload {payload_id} not found in conversation {conversation_id}.")
