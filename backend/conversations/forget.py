"""Forgetting a patient in the chat: what a deleted patient leaves behind in conversations is health data too.

A TrialScout turn sent while a patient was loaded carries that patient's profile in its user message (the
page `context`, and the page context block replayed from `extras.sent_content`), and its answer quotes
the profile and the note (the text, the screening tools' results in `tool_history` and `blocks`, cards
holding the profile). Deleting the patient redacts both messages of every such turn, drops the turn's
stored events and resume state, and renames a conversation titled from a redacted question. The turn
stays in place with a note, so the conversation still reads (and replays to the model) in order.

Which turns: those whose user message's page context names the patient (`context.screening.patient_id`);
the screening tools run only with a patient loaded, so every result they returned is among them. Earlier
versions of a conversation (`message_versions`, kept by regenerate and edit) are redacted the same way, so
switching back to one cannot bring the patient back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from backend.db.models.conversations import Conversation, Message, MessageVersion
from backend.db.models.turns import ChatTurn, TurnEvent

REDACTED_QUESTION = "[Removed: sent while a patient who has since been deleted was loaded.]"
REDACTED_ANSWER = "[Removed: this answer was about a patient who has since been deleted.]"
REDACTED_TITLE = "Deleted patient"


def _names_patient(context: Mapping[str, Any] | None, patient_id: int) -> bool:
    screening = context.get("screening") if isinstance(context, Mapping) else None
    return isinstance(screening, Mapping) and screening.get("patient_id") == patient_id


def forget_patient(s: Session, user_id: int, patient_id: int) -> None:
    """Redact the user's turns sent while the patient was loaded, in the caller's transaction (so the
    patient and its traces go together)."""
    conversations = select(Conversation.id).where(Conversation.user_id == user_id, Conversation.app == "trialscout")
    asked = s.execute(select(Message.id, Message.conversation_id, Message.context)
                      .where(Message.conversation_id.in_(conversations), Message.role == "user")).all()
    questions = {m.id: m.conversation_id for m in asked if _names_patient(m.context, patient_id)}
    retitle = _forget_in_versions(s, conversations, patient_id)
    for conversation_id in retitle:
        s.execute(update(Conversation).where(Conversation.id == conversation_id).values(title=REDACTED_TITLE))
    if not questions:
        return
    turns = s.execute(select(ChatTurn.id, ChatTurn.assistant_message_id)
                      .where(ChatTurn.user_message_id.in_(questions))).all()
    answers = {t.assistant_message_id for t in turns if t.assistant_message_id is not None}
    # A turn whose row is gone still has its answer right after the question in the conversation.
    for question, conversation_id in questions.items():
        following = s.scalar(select(Message.id).where(Message.conversation_id == conversation_id,
                                                      Message.id > question).order_by(Message.id).limit(1))
        if following is not None and following not in questions:
            answers.add(following)
    answers = set(s.scalars(select(Message.id).where(Message.id.in_(answers), Message.role == "assistant")))
    s.execute(update(Message).where(Message.id.in_(questions))
              .values(content=REDACTED_QUESTION, context=None, extras={}))
    s.execute(update(Message).where(Message.id.in_(answers)).values(content=REDACTED_ANSWER, extras={}))
    turn_ids = [t.id for t in turns]
    if turn_ids:
        s.execute(delete(TurnEvent).where(TurnEvent.turn_id.in_(turn_ids)))
        s.execute(update(ChatTurn).where(ChatTurn.id.in_(turn_ids)).values(resume_state=None))
    for conversation_id in set(questions.values()):
        first = s.scalar(select(Message.id).where(Message.conversation_id == conversation_id, Message.role == "user")
                         .order_by(Message.id).limit(1))
        if first in questions:  # the title was clipped from that question
            s.execute(update(Conversation).where(Conversation.id == conversation_id).values(title=REDACTED_TITLE))


def _forget_in_versions(s: Session, conversations: Any, patient_id: int) -> set[int]:
    """Redact the turns of archived versions the same way (a question naming the patient, and the answer
    after it); the conversations whose first question was one of them, to rename."""
    retitle = set()
    for row in s.scalars(select(MessageVersion).where(MessageVersion.conversation_id.in_(conversations))):
        messages = [dict(m) for m in row.messages]
        changed = False
        for index, message in enumerate(messages):
            if message["role"] != "user" or not _names_patient(message.get("context"), patient_id):
                continue
            message.update(content=REDACTED_QUESTION, context=None, extras={})
            following = messages[index + 1] if index + 1 < len(messages) else None
            if following is not None and following["role"] == "assistant":
                following.update(content=REDACTED_ANSWER, extras={})
            changed = True
            if row.position == 0 and index == 0:  # the title may have been clipped from it
                retitle.add(row.conversation_id)
        if changed:
            row.messages = messages  # a new list, so SQLAlchemy sees the JSON change
    s.flush()
    return retitle
