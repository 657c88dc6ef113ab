"""Earlier versions of a conversation's tail (regenerate, edit, the tray's "‹ 2 / 3 ›").

`conversation.messages` is only ever the active path, so the history sent to the model, exports and
redaction read it unchanged. A regenerate or edit archives the tail it replaces (`MessageVersion`, a JSON
snapshot of each message), and a switch archives the shown tail and puts the chosen one back as new rows:
message ids are not reused (SQLite may hand a freed id to another conversation), but everything the page
shows, card decisions included, comes back as it was.

A fork is a position (how many messages come before it). Its versions are numbered 1..n and the active one
is the number no archived row holds, so the active version needs no row of its own. Forks further down an
archived tail move into it (`parent_id`) and come back with it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from backend.conversations.schemas import VersionsRead
from backend.db.models import ChatTurn, Conversation, Message, MessageVersion
from backend.errors import NotFound


def position_of(conv: Conversation, message_id: int) -> int:
    for index, message in enumerate(conv.messages):
        if message.id == message_id:
            return index
    raise NotFound(f"Message {message_id} not found in conversation {conv.id}.")


def _archived(s: Session, conv: Conversation, position: int) -> list[MessageVersion]:
    return list(s.scalars(select(MessageVersion).where(
        MessageVersion.conversation_id == conv.id, MessageVersion.parent_id.is_(None),
        MessageVersion.position == position).order_by(MessageVersion.version)))


def _active_number(archived: list[MessageVersion]) -> int:
    taken = {row.version for row in archived}
    return next(n for n in range(1, len(archived) + 2) if n not in taken)


def _snapshot(m: Message) -> dict[str, Any]:
    return {"role": m.role, "content": m.content, "context": m.context, "extras": m.extras,
            "status": m.status, "created_at": m.created_at.isoformat()}


def archive_tail(s: Session, conv: Conversation, position: int) -> None:
    """Move the messages from `position` on into an archived version of that fork (and the forks below it
    with them); the turns that wrote them go, so their idempotency keys start new turns."""
    archived = _archived(s, conv, position)
    tail = conv.messages[position:]
    if not tail:  # nothing was sent after the last rewind: that empty version is dropped, not kept
        for row in archived:
            row.version = archived.index(row) + 1
        s.flush()
        return
    row = MessageVersion(conversation_id=conv.id, position=position, version=_active_number(archived),
                         messages=[_snapshot(m) for m in tail])
    s.add(row)
    s.flush()
    s.execute(update(MessageVersion).where(
        MessageVersion.conversation_id == conv.id, MessageVersion.parent_id.is_(None),
        MessageVersion.position > position, MessageVersion.id != row.id).values(parent_id=row.id))
    first = tail[0].id
    s.execute(delete(ChatTurn).where(ChatTurn.conversation_id == conv.id, ChatTurn.user_message_id >= first))
    s.execute(delete(Message).where(Message.conversation_id == conv.id, Message.id >= first))
    s.flush()
    s.expire(conv, ["messages"])


def restore(s: Session, conv: Conversation, position: int, version: int) -> None:
    """Show version `version` of the fork at `position` instead of the tail shown now."""
    chosen = next((row for row in _archived(s, conv, position) if row.version == version), None)
    if chosen is None:
        raise NotFound(f"Version {version} not found in conversation {conv.id}.")
    archive_tail(s, conv, position)
    for snapshot in chosen.messages:
        # One row at a time, so the ids follow the snapshot's order.
        s.add(Message(conversation_id=conv.id, role=snapshot["role"], content=snapshot["content"],
                      context=snapshot["context"], extras=snapshot["extras"], status=snapshot["status"],
                      created_at=datetime.fromisoformat(snapshot["created_at"])))
        s.flush()
    s.execute(update(MessageVersion).where(MessageVersion.parent_id == chosen.id).values(parent_id=None))
    s.delete(chosen)
    s.flush()
    s.expire(conv, ["messages"])


def forks(s: Session, conv: Conversation) -> list[VersionsRead]:
    """The forks on the active path with a message to draw the switcher on."""
    rows = s.execute(select(MessageVersion.position, MessageVersion.version).where(
        MessageVersion.conversation_id == conv.id, MessageVersion.parent_id.is_(None))).all()
    taken: dict[int, set[int]] = {}
    for position, version in rows:
        taken.setdefault(position, set()).add(version)
    messages = conv.messages
    out = []
    for position in sorted(taken):
        if position >= len(messages):
            continue
        count = len(taken[position]) + 1
        current = next(n for n in range(1, count + 1) if n not in taken[position])
        out.append(VersionsRead(message_id=messages[position].id, current=current, count=count))
    return out
