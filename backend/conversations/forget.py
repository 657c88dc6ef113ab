"""Forgetting a patient in the chat: what a deleted patient leaves behind in conversations is health data too.

A TrialScout turn sent while a patient was loaded carries that patient's profile in its user message (the
page `context`, and the page context block replayed from `extras.sent_content`), and its answer quotes
the profile and the note (the text, the screening tools' results in `tool_history` and `blocks`, cards
holding the profile). A later turn of the same conversation can quote those answers back ("what did you
say about her EGFR?") with the patient unloaded or another one loaded, and a turn anywhere can name one of
the patient's screenings to a tool (`screening_id`) and get its verdicts back. So deleting the patient
redacts, in the delete's transaction:

- in each conversation where the patient was loaded, every turn from the first such one to the end;
- in any of the user's conversations, each turn whose messages or stored events name one of the patient's
  screenings (a tool's `screening_id`, "Screening 12 …" in a tool result, a report's `/screenings/12/` link);
- the user's shortlist reports (`reports`) that quote it: a report's summary is a conversation's newest
  answer, which can be about the patient. (Its screening reports go with its screenings: `screening/store.py`.)
- the same turns in the earlier versions of a conversation that regenerate and edit keep (`message_versions`),
  so switching back to one cannot bring the patient back;
- the user's saved views whose state (the page's own JSON) names the patient, one of its screenings or its
  label: the page keeps what it likes there, so the server looks, once, here.

A redacted turn keeps its place with a placeholder (the conversation still reads, and replays to the model,
in order), loses its page context, extras, stored events and resume state, and ends if it was running:
Stop is asked of its worker (any instance), and the placeholder is the mark its late writes respect
(`chat/turns.py`: a final save or checkpoint after this one stores nothing of the answer). A conversation
titled from a redacted question is renamed.

Each kind of row has its own function below, called in one order — conversations, messages, turns, events —
the order a turn's final save locks them in, so the two wait for each other instead of deadlocking.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Text, cast, delete, func, or_, select, update
from sqlalchemy.orm import Session

from backend.db.models.conversations import Conversation, Message, MessageVersion
from backend.db.models.reports import Report
from backend.db.models.screening import Patient, PatientVersion, Screening
from backend.db.models.turns import ChatTurn, TurnEvent
from backend.db.models.views import SavedView

REDACTED_QUESTION = "[Removed: sent while a patient who has since been deleted was loaded.]"
REDACTED_ANSWER = "[Removed: this answer was about a patient who has since been deleted.]"
REDACTED_TITLE = "Deleted patient"
LIVE = ("running", "suspended")  # a turn still going (chat/turn.py: LIVE), ended here as interrupted

# How a stored message or event names a screening: a tool's input or a card (`"screening_id": 12`, quoted
# again inside a JSON string), a tool result's head ("Screening 12 (complete) …"), a report link.
QUOTE_AT_LEAST = 40  # characters of a sentence that count as quoting it (shorter ones are too common)
_SCREENING_REF = re.compile(r'screening_id\\*"?\s*:\s*(\d+)|\bscreening\s+#?(\d+)\b|/screenings/(\d+)\b', re.I)


@dataclass
class Redaction:
    """What forgetting one patient touches: whole turns (question and answer), by message and turn id."""

    questions: set[int] = field(default_factory=set)
    answers: set[int] = field(default_factory=set)
    turns: set[str] = field(default_factory=set)
    conversations: set[int] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.questions or self.answers)


def forget_patient(s: Session, user_id: int, patient_id: int) -> None:
    """Redact the user's turns about the patient and drop its reports and views that quote or name it, in
    the caller's transaction (so the patient and its traces go together). Call before the patient's rows
    are deleted: its screening ids, note and label find the rest. A new kind of row: one function more."""
    screening_ids = set(s.scalars(select(Screening.id).where(Screening.patient_id == patient_id)))
    found = turns_about(s, user_id, patient_id, screening_ids)
    quoted = quotes_of(s, patient_id, found)  # read before the answers are redacted
    if found:
        stop_conversations(s, found)
    redact_versions(s, user_id, patient_id, screening_ids)  # reads the shown path before it is redacted
    if found:
        redact_messages(s, found)
        end_turns(s, found)
        drop_events(s, found)
        rename_conversations(s, found)
    drop_reports(s, user_id, quoted)
    drop_views(s, user_id, patient_id, screening_ids)


def _names_patient(context: Mapping[str, Any] | None, patient_id: int) -> bool:
    screening = context.get("screening") if isinstance(context, Mapping) else None
    return isinstance(screening, Mapping) and screening.get("patient_id") == patient_id


def _names_screening(value: Any, screening_ids: set[int]) -> bool:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return any(int(next(g for g in m.groups() if g)) in screening_ids for m in _SCREENING_REF.finditer(text))


def turns_about(s: Session, user_id: int, patient_id: int, screening_ids: set[int]) -> Redaction:
    """The turns to redact. A turn is a user message and the assistant messages after it."""
    conversations = select(Conversation.id).where(Conversation.user_id == user_id)
    rows = s.execute(select(Message.id, Message.conversation_id, Message.role, Message.context)
                     .where(Message.conversation_id.in_(conversations)).order_by(Message.id)).all()
    turn_of: dict[int, int] = {}  # message id → the id of the question that opens its turn
    opened: dict[int, int] = {}  # conversation id → the question of its latest turn so far
    for m in rows:
        if m.role == "user":
            opened[m.conversation_id] = m.id
        if m.conversation_id in opened:
            turn_of[m.id] = opened[m.conversation_id]
    chosen: set[int] = set()  # questions
    first: dict[int, int] = {}  # conversation id → the patient's first turn in it
    for m in rows:
        if m.role == "user" and _names_patient(m.context, patient_id):
            first.setdefault(m.conversation_id, m.id)
    chosen |= {m.id for m in rows if m.conversation_id in first and m.id >= first[m.conversation_id]
               and m.role == "user"}
    if screening_ids:
        chosen |= {turn_of[i] for i in _messages_naming(s, conversations, screening_ids) if i in turn_of}
        chosen |= _live_turns_naming(s, user_id, screening_ids)
    found = Redaction()
    for m in rows:
        if m.id in turn_of and turn_of[m.id] in chosen:
            (found.questions if m.role == "user" else found.answers).add(m.id)
            found.conversations.add(m.conversation_id)
    if found:
        found.turns = set(s.scalars(select(ChatTurn.id).where(or_(
            ChatTurn.user_message_id.in_(found.questions), ChatTurn.assistant_message_id.in_(found.answers)))))
    return found


def _messages_naming(s: Session, conversations: Any, screening_ids: set[int]) -> set[int]:
    """Messages whose text or extras name one of the screenings (only those mentioning a screening are read)."""
    mentions = or_(func.lower(Message.content).contains("screening"),
                   func.lower(cast(Message.extras, Text)).contains("screening"))
    rows = s.execute(select(Message.id, Message.content, Message.extras)
                     .where(Message.conversation_id.in_(conversations), mentions))
    return {m.id for m in rows if _names_screening([m.content, m.extras], screening_ids)}


def _live_turns_naming(s: Session, user_id: int, screening_ids: set[int]) -> set[int]:
    """Questions of running turns whose events so far name a screening: their answer's extras are only
    written at checkpoints, so the tool call may be in the events alone."""
    live = s.execute(select(ChatTurn.id, ChatTurn.user_message_id)
                     .where(ChatTurn.user_id == user_id, ChatTurn.status.in_(LIVE))).all()
    chosen: set[int] = set()
    for turn in live:
        data = s.scalars(select(TurnEvent.data).where(TurnEvent.turn_id == turn.id))
        if turn.user_message_id is not None and _names_screening(list(data), screening_ids):
            chosen.add(turn.user_message_id)
    return chosen


def stop_conversations(s: Session, found: Redaction) -> None:
    """Ask the running turns of the affected conversations to stop, on whichever worker runs them (its
    watcher polls `stop_requested`); their saves after this store the placeholder, not the answer."""
    s.execute(update(Conversation)
              .where(Conversation.id.in_(found.conversations), Conversation.active_turn_id.in_(found.turns))
              .values(stop_requested=True, updated_at=Conversation.updated_at)
              .execution_options(synchronize_session=False))


def redact_messages(s: Session, found: Redaction) -> None:
    s.execute(update(Message).where(Message.id.in_(found.questions))
              .values(content=REDACTED_QUESTION, context=None, extras={})
              .execution_options(synchronize_session=False))
    s.execute(update(Message).where(Message.id.in_(found.answers), Message.status == "running")
              .values(status="interrupted").execution_options(synchronize_session=False))
    s.execute(update(Message).where(Message.id.in_(found.answers))
              .values(content=REDACTED_ANSWER, extras={}).execution_options(synchronize_session=False))


def end_turns(s: Session, found: Redaction) -> None:
    """No resume state (it holds the answer so far); a live turn ends here, so no worker goes on with it."""
    s.execute(update(ChatTurn).where(ChatTurn.id.in_(found.turns), ChatTurn.status.in_(LIVE))
              .values(status="interrupted").execution_options(synchronize_session=False))
    s.execute(update(ChatTurn).where(ChatTurn.id.in_(found.turns))
              .values(resume_state=None).execution_options(synchronize_session=False))


def drop_events(s: Session, found: Redaction) -> None:
    s.execute(delete(TurnEvent).where(TurnEvent.turn_id.in_(found.turns)).execution_options(synchronize_session=False))


def rename_conversations(s: Session, found: Redaction) -> None:
    """A conversation's title was clipped from its first question: renamed when that one is redacted."""
    for conversation_id in found.conversations:
        first = s.scalar(select(Message.id).where(Message.conversation_id == conversation_id, Message.role == "user")
                         .order_by(Message.id).limit(1))
        if first in found.questions:
            s.execute(update(Conversation).where(Conversation.id == conversation_id).values(title=REDACTED_TITLE))


def _patient_from(messages: list[dict[str, Any]], patient_id: int, screening_ids: set[int]) -> int | None:
    """Where in a path the patient's first turn opens: a question sent with it loaded, or a turn naming one
    of its screenings (the question that opens it)."""
    opened = None
    for index, message in enumerate(messages):
        if message["role"] == "user":
            opened = index
            if _names_patient(message.get("context"), patient_id):
                return index
        if opened is not None and screening_ids and _names_screening(
                [message.get("content"), message.get("extras")], screening_ids):
            return opened
    return None


def redact_versions(s: Session, user_id: int, patient_id: int, screening_ids: set[int]) -> None:
    """Archived tails by the rule of the shown path: each tail redacted from the patient's first turn on its
    own path (the messages before its fork, then its own) to its end. A tail forked after that turn is
    redacted whole; a conversation whose first question is redacted in one is renamed."""
    conversations = select(Conversation.id).where(Conversation.user_id == user_id)
    rows = {r.id: r for r in s.scalars(select(MessageVersion).where(
        MessageVersion.conversation_id.in_(conversations)))}
    if not rows:
        return
    shown: dict[int, list[dict[str, Any]]] = {}
    for m in s.execute(select(Message.conversation_id, Message.role, Message.content, Message.context,
                              Message.extras).where(Message.conversation_id.in_(sorted({r.conversation_id
                                                                                      for r in rows.values()})))
                       .order_by(Message.id)):
        shown.setdefault(m.conversation_id, []).append(dict(m._mapping))
    paths: dict[int, list[dict[str, Any]]] = {}

    def path(row: MessageVersion) -> list[dict[str, Any]]:
        """The row's messages as they read with the path they forked from (a nested fork: its parent's)."""
        if row.id not in paths:
            parent = rows.get(row.parent_id) if row.parent_id is not None else None
            before = path(parent) if parent is not None else shown.get(row.conversation_id, [])
            paths[row.id] = before[:row.position] + list(row.messages)
        return paths[row.id]

    starts = {row.id: _patient_from(path(row), patient_id, screening_ids) for row in rows.values()}
    for row in rows.values():
        start = starts[row.id]
        if start is None:
            continue
        messages = [dict(m) for m in row.messages]
        for message in messages[max(start - row.position, 0):]:
            if message["role"] == "user":
                message.update(content=REDACTED_QUESTION, context=None, extras={})
            else:
                message.update(content=REDACTED_ANSWER, extras={})
        row.messages = messages  # a new list, so SQLAlchemy sees the JSON change
        if start == 0:  # the title may have been clipped from its first question
            s.execute(update(Conversation).where(Conversation.id == row.conversation_id)
                      .values(title=REDACTED_TITLE))
    s.flush()


def _plain(text: str) -> str:
    """Text as a report shows it, whatever it was written in (HTML, Markdown): lower case, one space."""
    text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    text = " ".join(re.sub(r"[*_`#>|\[\]()]+", " ", text).split())
    return re.sub(r" ([.,;:!?])", r"\1", text).lower()


def quotes_of(s: Session, patient_id: int, found: Redaction) -> set[str]:
    """What quoting the patient means in stored text: a sentence of any version of its note, its label, or
    of an answer being redacted, as plain text (`_plain`)."""
    texts = [*s.scalars(select(PatientVersion.note).where(PatientVersion.patient_id == patient_id)),
             *s.scalars(select(Patient.label).where(Patient.id == patient_id)),
             *s.scalars(select(Message.content).where(Message.id.in_(found.answers)))]
    return {q for text in texts for line in text.splitlines()
            for q in re.split(r"(?<=[.!?;]) ", _plain(line)) if len(q) >= QUOTE_AT_LEAST}


def drop_reports(s: Session, user_id: int, quoted: set[str]) -> None:
    """A report is a record of what the user saw then: one that quotes the patient goes whole (HTML and PDF)."""
    if not quoted:
        return
    rows = s.execute(select(Report.id, Report.html).where(Report.user_id == user_id)).all()
    gone = [r.id for r in rows if any(q in _plain(r.html) for q in quoted)]
    if gone:
        s.execute(delete(Report).where(Report.id.in_(gone)).execution_options(synchronize_session=False))


def _names_in_state(value: Any, patient_id: int, screening_ids: set[int], label: str | None) -> bool:
    if isinstance(value, Mapping):
        for key, item in value.items():
            name = str(key).replace("_", "").lower()
            if (name == "patientid" and item == patient_id) or (name == "screeningid" and item in screening_ids):
                return True
            if _names_in_state(item, patient_id, screening_ids, label):
                return True
        return False
    if isinstance(value, list):
        return any(_names_in_state(item, patient_id, screening_ids, label) for item in value)
    return isinstance(value, str) and bool(label) and (label or "") in value


def drop_views(s: Session, user_id: int, patient_id: int, screening_ids: set[int]) -> None:
    """A saved view (the working state or a named one) that names the patient goes whole."""
    label = s.scalar(select(Patient.label).where(Patient.id == patient_id))
    rows = s.execute(select(SavedView.id, SavedView.state).where(SavedView.user_id == user_id)).all()
    gone = [r.id for r in rows if _names_in_state(r.state, patient_id, screening_ids, label)]
    if gone:
        s.execute(delete(SavedView).where(SavedView.id.in_(gone)).execution_options(synchronize_session=False))
