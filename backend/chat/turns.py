"""A turn's rows: every statement on `chat_turns`, `turn_events`, a conversation's lease and the answer.

A turn claims its conversation with one atomic UPDATE (so two workers can't both start a turn in it).
Its worker renews a short lease for all of its running turns in one UPDATE every few seconds, so a
worker that dies (kill -9, a crash, a restart) stops renewing and its turns' leases lapse within
`LEASE`: the conversation is free again, and `interrupt_stale` marks such a turn interrupted, with the
progress it had saved, a history the Messages API accepts, and a terminal event for its readers (after a
`resync` to the stored answer: a dead worker's readers may hold text it never stored). Stop
from any worker sets `stop_requested` on a live lease only, so a stale turn is never "stopped".
(`updated_at` is kept as it is: bookkeeping is not activity.) The lease is the fallback: a turn also
names its worker (`chat/workers.py`), whose liveness lock a dead process can't hold, so a turn of a
provably dead worker counts as stale at once.

Checkpoints (`save_progress`, every half second for each running turn) write its new events always, and
its answer, blocks and `ResumeState` only when its structure changed or its text has doubled
(`TurnRunner.progress` decides): rewritten whole each time, a long answer made every checkpoint cost its
full length. The text since the last whole checkpoint is in the events (`text_after`): whoever ends or
continues the turn for a dead worker adds it back. The final save (`save_end`) writes the answer, the
turn's status, its last events and the terminal event in one transaction and releases the lease.

Deleting a patient can redact a running turn (`conversations/forget.py`): its answer's content becomes
the placeholder, and that is the mark every later write of the turn respects. A checkpoint writes the
answer only while it is `running` (forget ends it) and takes its new events back out if the answer is
redacted; a final save leaves a redacted answer and its events alone. Both check after locking the rows
forget locks (the answer, then the turn: forget's order), so whichever commits second sees the other.

Statements run once per turn or per checkpoint are Core, built once at import with their values as
parameters: built per call as ORM statements, each is compiled and cache-keyed again.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import Boolean, bindparam, case, delete, func, insert, or_, select, text, true, update
from sqlalchemy.orm import Session

from backend.agent.schemas import MessageExtras, Resynced
from backend.chat.log import RESERVE, Frame
from backend.chat.notify import EVENTS, STATES, notify
from backend.chat.turn import INTERRUPTED, LIVE, EndStatus, ResumeState, terminal_event
from backend.chat.workers import WorkerPresence
from backend.conversations.forget import REDACTED_ANSWER
from backend.db.base import table_of, utcnow
from backend.db.models import ChatTurn, Conversation, Message, TurnEvent
from backend.quotas import record_usage

LEASE = timedelta(seconds=10)
RENEW_EVERY = timedelta(seconds=2)

FROM_START = ResumeState(through=0).dump()  # nothing answered yet; every text event after 0 is the answer's
_MESSAGES, _TURNS, _CONVERSATIONS = table_of(Message), table_of(ChatTurn), table_of(Conversation)
_EVENTS = insert(table_of(TurnEvent))
# PostgreSQL: a batch's rows as four arrays in one statement. As an executemany, psycopg sends one INSERT
# per row down its pipeline, each bound and encoded in Python: the largest database cost per streamed
# delta (benchmarks/README.md).
_EVENTS_UNNESTED = text(
    "INSERT INTO turn_events (turn_id, seq, type, data) SELECT * FROM unnest(CAST(:turn_ids AS varchar[]), "
    "CAST(:seqs AS integer[]), CAST(:types AS varchar[]), CAST(:datas AS json[]))")
# Both of a turn's messages in one INSERT: each comes back with its role (asked to keep the rows' order, SQLite
# would run one INSERT per row).
_NEW_MESSAGES = insert(_MESSAGES).returning(_MESSAGES.c.id, _MESSAGES.c.role)
_NEW_TURN = insert(_TURNS)
# A checkpoint never moves an ended turn's last event back (its end numbers after what readers may hold).
# (Not `in_(LIVE)`: an expanding IN can't be run for many turns at once, as a checkpoint runs it.)
_STILL_LIVE = (_TURNS.c.id == bindparam("b_turn")) & or_(*(_TURNS.c.status == status for status in LIVE))
# One UPDATE for every turn of a checkpoint: the resume state only where the runner gave one (`b_whole`).
_CHECKPOINT = (update(_TURNS).where(_STILL_LIVE)
               .values(last_event_id=bindparam("b_last"),
                       resume_state=case((bindparam("b_whole", type_=Boolean) == true(),
                                          bindparam("b_state", type_=_TURNS.c.resume_state.type)),
                                         else_=_TURNS.c.resume_state)))
_ANSWER_SO_FAR = (update(_MESSAGES).where(_MESSAGES.c.id == bindparam("b_message"), _MESSAGES.c.status == "running")
                  .values(content=bindparam("b_content"), extras=bindparam("b_extras")))
_ANSWER = (update(_MESSAGES).where(_MESSAGES.c.id == bindparam("b_message"), _MESSAGES.c.content != REDACTED_ANSWER)
           .values(content=bindparam("b_content"), extras=bindparam("b_extras"), status=bindparam("b_status")))
_REDACTED = (select(_TURNS.c.id).join(_MESSAGES, _MESSAGES.c.id == _TURNS.c.assistant_message_id)
             .where(_TURNS.c.id.in_(bindparam("b_turns", expanding=True)), _MESSAGES.c.content == REDACTED_ANSWER))
_STORED_LAST = select(_TURNS.c.last_event_id).where(_TURNS.c.id == bindparam("b_turn"))
_TURN_END = (update(_TURNS).where(_TURNS.c.id == bindparam("b_turn"))
             .values(status=bindparam("b_status"), last_event_id=bindparam("b_last")))
# The usual end: the turn still running and none of its last events stored (`b_first`: the first of them).
_RUNNING_END = (update(_TURNS).where(_TURNS.c.id == bindparam("b_turn"), _TURNS.c.status == "running",
                                     _TURNS.c.last_event_id < bindparam("b_first"))
                .values(status=bindparam("b_status"), last_event_id=bindparam("b_last")))
_HOLDS = _CONVERSATIONS.c.active_turn_id == bindparam("b_turn")
_END = (update(_CONVERSATIONS).where(_CONVERSATIONS.c.id == bindparam("b_conversation"))
        .values(updated_at=bindparam("b_now"),
                active_turn_id=case((_HOLDS, None), else_=_CONVERSATIONS.c.active_turn_id),
                active_turn_expires_at=case((_HOLDS, None), else_=_CONVERSATIONS.c.active_turn_expires_at),
                stop_requested=case((_HOLDS, False), else_=_CONVERSATIONS.c.stop_requested)))


@dataclass(frozen=True)
class Progress:
    """What one running turn has to save at a checkpoint: its new frames and, when its runner says so,
    its answer so far (`text`, `extras`, `resume_state` all three, or none: the text since is in the
    frames)."""

    turn_id: str
    message_id: int
    frames: list[Frame]
    text: str | None = None
    extras: dict[str, Any] | None = None
    resume_state: ResumeState | None = None


@dataclass(frozen=True)
class Suspension:
    """Where a turn stopped by a shutdown is (`save_suspended`): its unsaved frames, the answer so far
    and its extras, and its resume state."""

    turn_id: str
    conversation_id: int
    message_id: int
    frames: list[Frame]
    text: str
    extras: dict[str, Any]
    state: ResumeState


@dataclass(frozen=True)
class Opened:
    """The rows `open_turn` wrote for a new turn: its user message and the answer-to-be."""

    user_message_id: int
    assistant_message_id: int


# -- begin -------------------------------------------------------------------------------------------
def lease(turn_id: str, now: datetime | None = None) -> dict[str, Any]:
    """A conversation's columns while `turn_id` holds it (a new conversation is made with them: taken)."""
    return {"active_turn_id": turn_id, "active_turn_expires_at": (now or utcnow()) + LEASE, "stop_requested": False}


def claim(s: Session, conversation_id: int, turn_id: str, workers: WorkerPresence | None = None) -> bool:
    """Take the conversation for `turn_id`: free, its lease lapsed, or its turn's worker provably dead
    (that turn is interrupted first, keeping its progress)."""
    if _take(s, conversation_id, turn_id):
        return True
    return workers is not None and interrupt_stale(s, conversation_id, workers=workers) > 0 and _take(
        s, conversation_id, turn_id)


def _take(s: Session, conversation_id: int, turn_id: str) -> bool:
    now = utcnow()
    result = s.execute(  # (a turn begins: the conversation's activity, so `updated_at` moves here too)
        update(Conversation)
        .where(Conversation.id == conversation_id,
               or_(Conversation.active_turn_id.is_(None), Conversation.active_turn_expires_at < now))
        .values(**lease(turn_id, now), updated_at=now)
        .execution_options(synchronize_session=False))
    return result.rowcount == 1  # type: ignore[attr-defined]


def messages_of(s: Session, conversation_id: int, through: int | None = None) -> list[Message]:
    """The conversation's messages in order (up to message `through`): the history a turn is told."""
    query = select(Message).where(Message.conversation_id == conversation_id)
    if through is not None:
        query = query.where(Message.id <= through)
    return list(s.scalars(query.order_by(Message.id)))


def open_turn(s: Session, *, turn_id: str, conversation_id: int, user_id: int, key: str | None,
              fingerprint: str, message: str, context: dict[str, Any], sent: dict[str, Any],
              opened: dict[str, Any], worker_id: str | None) -> Opened:
    """A new turn's user message, its assistant message-to-be (`running`, filled by the checkpoints) and
    its `chat_turns` row, resumable from the start until its first checkpoint: a turn whose worker goes
    before that (a drain that ran out of time, a crash) is taken over, not interrupted."""
    ids = {role: id_ for id_, role in s.execute(_NEW_MESSAGES, [
        {"conversation_id": conversation_id, "role": "user", "content": message, "context": context,
         "extras": sent, "status": "complete"},
        {"conversation_id": conversation_id, "role": "assistant", "content": "", "context": None,
         "extras": opened, "status": "running"}])}
    user_message_id, answer_id = ids["user"], ids["assistant"]
    s.execute(_NEW_TURN, {
        "id": turn_id, "conversation_id": conversation_id, "user_id": user_id, "idempotency_key": key,
        "request_hash": fingerprint, "status": "running", "user_message_id": user_message_id,
        "assistant_message_id": answer_id, "last_event_id": 0, "worker_id": worker_id, "resume_state": FROM_START})
    return Opened(user_message_id, answer_id)


def by_key(s: Session, user_id: int, key: str) -> ChatTurn | None:
    return s.scalar(select(ChatTurn).where(ChatTurn.user_id == user_id, ChatTurn.idempotency_key == key))


def of_conversation(s: Session, conversation_id: int, turn_id: str) -> ChatTurn | None:
    return s.scalar(select(ChatTurn).where(ChatTurn.id == turn_id, ChatTurn.conversation_id == conversation_id))


def latest(s: Session, conversation_id: int) -> ChatTurn | None:
    return s.scalar(select(ChatTurn).where(ChatTurn.conversation_id == conversation_id)
                    .order_by(ChatTurn.created_at.desc()).limit(1))


# -- events ------------------------------------------------------------------------------------------
def save_frames(s: Session, turns: Iterable[tuple[str, list[Frame]]]) -> None:
    """The frames of one turn or of many ((turn_id, frames) pairs) in one INSERT statement."""
    pairs = [(turn_id, frames) for turn_id, frames in turns if frames]
    if not pairs:
        return
    if s.get_bind().dialect.name == "postgresql":
        rows = [(turn_id, f) for turn_id, frames in pairs for f in frames]
        s.execute(_EVENTS_UNNESTED, {"turn_ids": [turn_id for turn_id, _ in rows], "seqs": [f.id for _, f in rows],
                                     "types": [f.type for _, f in rows],
                                     "datas": [json.dumps(f.data) for _, f in rows]})
    else:  # (SQLite's executemany runs the rows in C)
        s.execute(_EVENTS, [{"turn_id": turn_id, "seq": f.id, "type": f.type, "data": f.data}
                            for turn_id, frames in pairs for f in frames])
    notify(s, EVENTS, (turn_id for turn_id, _ in pairs))  # their readers on other instances (chat/fanout.py)


def stored_frames(s: Session, turn_id: str, after: int, limit: int = 500) -> list[Frame]:
    rows = s.execute(select(TurnEvent.seq, TurnEvent.type, TurnEvent.data)
                     .where(TurnEvent.turn_id == turn_id, TurnEvent.seq > after)
                     .order_by(TurnEvent.seq).limit(limit))
    return [Frame(id=seq, type=type_, data=data) for seq, type_, data in rows]


def all_frames(s: Session, turn_id: str) -> list[Frame]:
    frames: list[Frame] = []
    while batch := stored_frames(s, turn_id, frames[-1].id if frames else 0):
        frames.extend(batch)
    return frames


def frames_for_reader(s: Session, turn_id: str, after: int) -> list[Frame]:
    """What a reader of a turn that runs elsewhere (or ran) gets next: stored frames after `after`; none
    while the turn is live; else its end, numbered after what the reader has. Events that are gone (a
    dead worker never saved them, or they were purged after a day) don't hide the turn's end: its stored
    terminal event, else one rebuilt from the stored answer."""
    frames = stored_frames(s, turn_id, after)
    if frames:
        return frames
    record = s.get(ChatTurn, turn_id)
    if record is None:
        return [Frame(id=after + 1, type="error", data={"message": "This turn has no more events.",
                                                        "code": "no_more_events", "retryable": False,
                                                        "type": "error"})]
    if record.status in LIVE:
        return []
    end = [f for f in stored_frames(s, turn_id, record.last_event_id - 1, limit=1) if f.terminal]
    if end:
        return [Frame(id=after + 1, type=end[0].type, data=end[0].data)]
    message = s.get(Message, record.assistant_message_id) if record.assistant_message_id else None
    extras = MessageExtras.model_validate(message.extras or {}) if message is not None else MessageExtras()
    event = terminal_event(record.conversation_id, record.assistant_message_id, cast(EndStatus, record.status),
                           extras.error, message.content if message is not None else "", extras)
    return [Frame(id=after + 1, type=event.type, data=event.to_data())]


def text_after(s: Session, turn_id: str, through: int) -> str:
    """The text a turn's readers were sent after event `through`: what a dead worker's turn is missing
    since its last whole checkpoint."""
    return "".join(data.get("text", "") for data in s.scalars(
        select(TurnEvent.data).where(TurnEvent.turn_id == turn_id, TurnEvent.seq > through,
                                     TurnEvent.type == "text_delta").order_by(TurnEvent.seq)))


def purge_events(s: Session, older_than: datetime) -> None:
    """Finished turns keep their events for replays (resume, idempotent resubmits) for a while only."""
    old = select(ChatTurn.id).where(ChatTurn.status != "running", ChatTurn.updated_at < older_than)
    s.execute(delete(TurnEvent).where(TurnEvent.turn_id.in_(old)))


# -- while it runs -----------------------------------------------------------------------------------
def save_progress(s: Session, batch: Sequence[Progress]) -> None:
    """A checkpoint of many turns: their new events, and the answers so far that the runners gave."""
    save_frames(s, [(p.turn_id, p.frames) for p in batch])
    if answered := [p for p in batch if p.text is not None]:  # (the answers before the turns: forget's order)
        s.execute(_ANSWER_SO_FAR, [{"b_message": p.message_id, "b_content": p.text, "b_extras": p.extras}
                                   for p in answered])
    moved = s.execute(_CHECKPOINT, [{"b_turn": p.turn_id, "b_last": p.frames[-1].id, "b_whole": p.text is not None,
                                     "b_state": p.resume_state.dump() if p.resume_state else None} for p in batch])
    # A forgotten turn's answer is redacted and the turn ended with it, so its UPDATE above matched nothing:
    # only a batch with such a turn (or one that ended on its own meanwhile) looks for redacted answers.
    if moved.rowcount < len(batch) and (  # type: ignore[attr-defined]
            redacted := list(s.scalars(_REDACTED, {"b_turns": [p.turn_id for p in batch]}))):
        s.execute(delete(TurnEvent).where(TurnEvent.turn_id.in_(redacted)))


def renew_and_poll(s: Session, leases: Mapping[int, str], renew: bool) -> set[int]:
    """For this worker's running turns ({conversation_id: turn_id}): renew their leases (when `renew`)
    and return the conversations whose turn should stop (Stop asked, or the turn lost its lease)."""
    if not leases:
        return set()
    if renew:
        s.execute(update(Conversation)
                  .where(Conversation.id.in_(list(leases)), Conversation.active_turn_id.in_(list(leases.values())))
                  .values(active_turn_expires_at=utcnow() + LEASE, updated_at=Conversation.updated_at)
                  .execution_options(synchronize_session=False))
    rows = s.execute(select(Conversation.id, Conversation.active_turn_id, Conversation.stop_requested)
                     .where(Conversation.id.in_(list(leases))))
    alive = {cid: (turn_id, stop) for cid, turn_id, stop in rows}
    return {cid for cid, turn_id in leases.items()
            if cid not in alive or alive[cid][0] != turn_id or alive[cid][1]}


def request_stop(s: Session, user_id: int, conversation_id: int) -> bool:
    result = s.execute(
        update(Conversation)
        .where(Conversation.id == conversation_id, Conversation.user_id == user_id,
               Conversation.active_turn_id.is_not(None), Conversation.active_turn_expires_at > utcnow())
        .values(stop_requested=True, updated_at=Conversation.updated_at)
        .execution_options(synchronize_session=False))
    return result.rowcount == 1  # type: ignore[attr-defined]


def stop_dead(s: Session, user_id: int, conversation_id: int, workers: WorkerPresence) -> bool:
    """Stop for a turn whose worker is gone (or whose lease lapsed): nothing can ask it to stop, so it is
    marked interrupted here, with what it had saved. True when there was such a turn."""
    if s.scalar(select(Conversation.id).where(Conversation.id == conversation_id,
                                              Conversation.user_id == user_id)) is None:
        return False
    return interrupt_stale(s, conversation_id, workers=workers) > 0


# -- the end -----------------------------------------------------------------------------------------
def save_end(s: Session, *, user_id: int, conversation_id: int, turn_id: str, message_id: int, content: str,
             extras: MessageExtras, status: EndStatus, frames: list[Frame], model: str) -> None:
    """The answer, the turn's end and its last events (the terminal one last) in one transaction, as
    plain statements (no loads, no unit of work). `model` is what the usage is recorded under."""
    if extras.usage is not None:  # the daily token budget counts every turn, kept or not
        record_usage(s, user_id, extras.usage.model_dump(), model)
    ended = s.execute(_END, {"b_conversation": conversation_id, "b_turn": turn_id, "b_now": utcnow()})
    if ended.rowcount != 1:  # type: ignore[attr-defined]
        return  # deleted while the turn ran: nothing to attach the answer to
    written = s.execute(_ANSWER, {"b_message": message_id, "b_content": content,
                                  "b_extras": extras.model_dump(mode="json"), "b_status": status})
    if written.rowcount != 1:  # type: ignore[attr-defined]
        return  # redacted while the turn ran (its patient was deleted): it stays so, its events gone
    ran = s.execute(_RUNNING_END, {"b_turn": turn_id, "b_status": status, "b_first": frames[0].id,
                                   "b_last": frames[-1].id}) if frames else None
    if ran is None or ran.rowcount != 1:  # type: ignore[attr-defined]
        # Ended meanwhile (a sweep that thought its worker dead), or a save it never heard of stored some of
        # them: never a stored event twice, and its end last.
        stored = s.scalar(_STORED_LAST, {"b_turn": turn_id})
        if stored is not None:
            frames = [f for f in frames if f.id > stored]
            s.execute(_TURN_END, {"b_turn": turn_id, "b_status": status,
                                  "b_last": frames[-1].id if frames else stored})
    save_frames(s, [(turn_id, frames)])


def save_suspended(s: Session, batch: Sequence[Suspension]) -> set[str]:
    """Turns stopped by a shutdown between tool calls, where each is, for a live worker to go on with it:
    all in one transaction (a drain stops every turn at once, with seconds to save them). Returns the
    turns suspended (not one that ended meanwhile)."""
    records = {r.id: r for r in s.scalars(select(ChatTurn).where(ChatTurn.id.in_([b.turn_id for b in batch])))}
    convs = {c.id: c for c in s.scalars(select(Conversation).where(
        Conversation.id.in_({b.conversation_id for b in batch})))}
    answers = {m.id: m for m in s.scalars(select(Message).where(Message.id.in_([b.message_id for b in batch])))}
    suspended: list[tuple[str, list[Frame]]] = []
    for b in batch:
        record, conv = records.get(b.turn_id), convs.get(b.conversation_id)
        if record is None or conv is None or record.status != "running":
            continue
        frames = [f for f in b.frames if f.id > record.last_event_id]
        suspended.append((b.turn_id, frames))
        if frames:
            record.last_event_id = frames[-1].id
        record.status = "suspended"
        record.resume_state = b.state.dump()
        message = answers.get(b.message_id)
        if message is not None and message.status == "running":
            message.content = b.text
            message.extras = b.extras
        _release(s, conv.id, b.turn_id)
    save_frames(s, suspended)
    notify(s, STATES, [turn_id for turn_id, _ in suspended])  # their readers elsewhere go on with them now
    return {turn_id for turn_id, _ in suspended}


def interrupt_stale(s: Session, conversation_id: int | None = None, now: datetime | None = None,
                    workers: WorkerPresence | None = None) -> int:
    """Mark live turns whose worker no longer holds their lease, or is provably dead (`workers`), or that
    were suspended, as interrupted. Returns how many. Their assistant message keeps the progress its
    worker saved, and their readers get a `resync` to it before the terminal event (none for a suspended
    turn: it stored all it sent). Each turn is taken with a conditional UPDATE, so two sweepers never both
    end it."""
    now = now or utcnow()
    query = (select(ChatTurn, Conversation).join(Conversation, Conversation.id == ChatTurn.conversation_id)
             .where(ChatTurn.status.in_(LIVE)))
    if conversation_id is not None:
        query = query.where(ChatTurn.conversation_id == conversation_id)
    found = s.execute(query).all()
    dead = workers.dead(s, {turn.worker_id for turn, _ in found}) if workers is not None and found else set()
    def ends(turn: ChatTurn, holder: str | None, expires: datetime | None) -> bool:
        """Suspended, its lease lapsed or held by another turn, or its worker dead."""
        lapsed = holder != turn.id or expires is None or expires < now
        return turn.status == "suspended" or lapsed or turn.worker_id in dead

    count = 0
    for turn, conv in found:
        if not ends(turn, conv.active_turn_id, conv.active_turn_expires_at):
            continue
        # The conversation's row first, as a begin's claim, a final save and forget take it (then the turn's):
        # a begin ending this turn and a sweep ending it too wait for each other instead of deadlocking. Read
        # under the lock, the lease is as it is now, not as it was when the rows above were read.
        held = s.execute(select(Conversation.active_turn_id, Conversation.active_turn_expires_at)
                         .where(Conversation.id == conv.id).with_for_update()).one_or_none()
        if not ends(turn, *(held or (None, None))):
            continue
        ahead = 0 if turn.status == "suspended" else RESERVE  # ids its readers may hold (chat/log.py)
        message = s.get(Message, turn.assistant_message_id) if turn.assistant_message_id else None
        answering = message is not None and message.status == "running"
        # A dead worker's readers may hold text it never stored (a suspended turn stored all it sent): its
        # end opens with a `resync` to the stored answer, as a continuation does (`TurnRunner.start`).
        resync = int(ahead > 0 and answering)
        seq = s.scalar(update(ChatTurn).where(ChatTurn.id == turn.id, ChatTurn.status == turn.status)
                       .values(status="interrupted", last_event_id=ChatTurn.last_event_id + ahead + 1 + resync)
                       .returning(ChatTurn.last_event_id).execution_options(synchronize_session=False))
        if seq is None:
            continue  # another worker ended it meanwhile
        count += 1
        if message is not None and answering:
            extras = MessageExtras.model_validate(message.extras or {})
            saved = ResumeState.load(turn.resume_state)
            if saved is not None and saved.through is not None and (tail := text_after(s, turn.id, saved.through)):
                message.content += tail  # what its readers were sent after its last whole checkpoint
                extras = extras.model_copy(update={"blocks": saved.caught_up(tail).state().history()})
            message.extras = extras.model_copy(update={"error": INTERRUPTED}).model_dump(mode="json")
            message.status = "interrupted"
            if extras.usage is not None:  # what the dead worker's turn had used, as of its last checkpoint
                record_usage(s, turn.user_id, extras.usage.model_dump(), extras.model or "unrecorded")
        if resync and message is not None:
            stored = s.scalar(select(func.max(TurnEvent.seq)).where(TurnEvent.turn_id == turn.id)) or 0
            lost = Resynced(after=stored, text=message.content)
            s.add(TurnEvent(turn_id=turn.id, seq=seq - 1, type=lost.type, data=lost.to_data()))
        terminal = terminal_event(conv.id, turn.assistant_message_id, "interrupted", INTERRUPTED)
        s.add(TurnEvent(turn_id=turn.id, seq=seq, type=terminal.type, data=terminal.to_data()))
        notify(s, EVENTS, [turn.id])
        _release(s, conv.id, turn.id)
    return count


def interrupt_if_stale(s: Session, turn_id: str, workers: WorkerPresence) -> None:
    """A reader waited long for a live turn: end it if its worker is gone."""
    record = s.get(ChatTurn, turn_id)
    if record is not None and record.status in LIVE:
        interrupt_stale(s, record.conversation_id, workers=workers)


def _release(s: Session, conversation_id: int, turn_id: str) -> None:
    """Free the conversation if `turn_id` still holds it, as the database has it now: the loaded row may be
    older than a claim made since (a begin that ends the turn it supersedes has just claimed it in this
    very transaction; a sweep elsewhere read it before a begin committed), and that claim must stand."""
    s.execute(update(Conversation)
              .where(Conversation.id == conversation_id, Conversation.active_turn_id == turn_id)
              .values(active_turn_id=None, active_turn_expires_at=None, stop_requested=False,
                      updated_at=Conversation.updated_at)
              .execution_options(synchronize_session=False))
