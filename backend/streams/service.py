"""Research streams: reading for everyone signed in, changes for admins, the history of chat instructions
(every change is an InstructionVersion with who, when and a note), diffs, restores, and the stream a chat
turn runs in. A plain user reads a stream's summary; its chat instructions and who edited it are for admins.

Every existing stream is visible to every signed-in user, so a non-admin's change is 403 for a stream that
exists and 404 for one that does not (`require_editor`, which the router runs before reading a body: a
refused request writes nothing). Saving the same instructions again is not a change and adds no version.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from backend.auth.service import CurrentUserInfo
from backend.db.base import utcnow
from backend.db.ids import as_db_id
from backend.db.models import InstructionVersion, ResearchStream, User
from backend.errors import Conflict, Forbidden, InvalidInput, NotFound
from backend.streams.schemas import (
    MAX_INSTRUCTIONS,
    MAX_NOTE,
    DiffLine,
    DiffRead,
    InstructionRestore,
    StreamCreate,
    StreamRead,
    StreamSummary,
    StreamUpdate,
    VersionRead,
    clean_text,
)

# The chat request's context key (admins only) whose text replaces the stream's saved instructions for one
# turn: the sandbox for a draft. The prompt preview accepts the same key, so both build the same prompt.
STREAM_DRAFT_KEY = "stream_draft_instructions"


# -- reading -------------------------------------------------------------------------------------------
def get_stream(s: Session, stream_id: int, lock: bool = False) -> ResearchStream:
    stream = s.get(ResearchStream, stream_id, with_for_update=lock)
    if stream is None:
        raise NotFound(f"Research stream {stream_id} not found.")
    return stream


def require_editor(s: Session, user: CurrentUserInfo, stream_id: int) -> None:
    get_stream(s, stream_id)
    if not user.is_admin:
        raise Forbidden("Only admins can change research streams or see their instruction history.")


def _usernames(s: Session, ids: Iterable[int | None]) -> dict[int, str]:
    wanted = {i for i in ids if i is not None}
    if not wanted:
        return {}
    rows = s.execute(select(User.id, User.username).where(User.id.in_(wanted)))
    return {uid: name for uid, name in rows}


def _version_stats(s: Session, stream_ids: list[int]) -> dict[int, tuple[int, int, int]]:
    """stream id -> (id of its newest version, that version's number in its stream, number of versions)."""
    if not stream_ids:
        return {}
    rows = s.execute(select(InstructionVersion.stream_id, func.max(InstructionVersion.id),
                            func.max(InstructionVersion.number), func.count())
                     .where(InstructionVersion.stream_id.in_(stream_ids))
                     .group_by(InstructionVersion.stream_id))
    return {sid: (newest, number, count) for sid, newest, number, count in rows}


def current_version_id(s: Session, stream_id: int) -> int | None:
    return s.scalar(select(func.max(InstructionVersion.id)).where(InstructionVersion.stream_id == stream_id))


def current_version_number(s: Session, stream_id: int) -> int | None:
    return s.scalar(select(func.max(InstructionVersion.number)).where(InstructionVersion.stream_id == stream_id))


def _summary(st: ResearchStream) -> StreamSummary:
    return StreamSummary(id=st.id, name=st.name, description=st.description, settings=st.settings or {},
                         archived=st.archived, created_at=st.created_at, updated_at=st.updated_at)


def _reads(s: Session, streams: list[ResearchStream]) -> list[StreamRead]:
    names = _usernames(s, (st.updated_by for st in streams))
    stats = _version_stats(s, [st.id for st in streams])
    none: tuple[None, None, int] = (None, None, 0)
    return [StreamRead(
        **_summary(st).model_dump(), chat_instructions=st.chat_instructions,
        updated_by=names.get(st.updated_by) if st.updated_by else None,
        current_version_id=stats.get(st.id, none)[0], current_version_number=stats.get(st.id, none)[1],
        version_count=stats.get(st.id, none)[2],
    ) for st in streams]


def _views(s: Session, viewer: CurrentUserInfo, streams: list[ResearchStream]) -> list[StreamRead | StreamSummary]:
    """Admins read everything; everyone else the summary (no instructions, no editors' names)."""
    if viewer.is_admin:
        return list(_reads(s, streams))
    return [_summary(st) for st in streams]


def list_streams(s: Session, viewer: CurrentUserInfo,
                 include_archived: bool = False) -> list[StreamRead | StreamSummary]:
    query = select(ResearchStream).order_by(func.lower(ResearchStream.name), ResearchStream.id)
    if not include_archived:
        query = query.where(ResearchStream.archived.is_(False))
    return _views(s, viewer, list(s.scalars(query)))


def view(s: Session, viewer: CurrentUserInfo, stream_id: int) -> StreamRead | StreamSummary:
    return _views(s, viewer, [get_stream(s, stream_id)])[0]


def read(s: Session, stream_id: int) -> StreamRead:
    return _reads(s, [get_stream(s, stream_id)])[0]


# -- changing (admins) ---------------------------------------------------------------------------------
def _check_name_free(s: Session, name: str, stream_id: int | None = None) -> None:
    query = select(ResearchStream.id).where(func.lower(ResearchStream.name) == name.lower())
    if stream_id is not None:
        query = query.where(ResearchStream.id != stream_id)
    if s.scalar(query.limit(1)) is not None:
        raise Conflict(f"A research stream named {name!r} already exists; choose another name.")


def _record_version(s: Session, stream: ResearchStream, text: str | None, user_id: int | None,
                    note: str | None) -> InstructionVersion:
    """The next number in this stream: callers hold the stream's row lock (or just created it), so two saves
    cannot take the same number; the unique (stream_id, number) constraint backs that up."""
    stream.chat_instructions = text
    number = (current_version_number(s, stream.id) or 0) + 1
    version = InstructionVersion(stream_id=stream.id, number=number, chat_instructions=text, note=note,
                                 created_by=user_id)
    s.add(version)
    return version


def create(s: Session, user: CurrentUserInfo, body: StreamCreate) -> StreamRead:
    _check_name_free(s, body.name)
    stream = ResearchStream(name=body.name, description=body.description, archived=False,
                            settings=body.settings.stored() if body.settings else None, updated_by=user.id)
    s.add(stream)
    s.flush()
    if body.chat_instructions:
        _record_version(s, stream, body.chat_instructions, user.id, body.note or "Created with the stream")
    s.flush()
    return read(s, stream.id)


def update(s: Session, user: CurrentUserInfo, stream_id: int, body: StreamUpdate) -> StreamRead:
    stream = get_stream(s, stream_id, lock=True)  # serialises concurrent saves of one stream (PostgreSQL)
    sent = body.model_fields_set
    if body.expected_version_id is not None:
        current = current_version_id(s, stream.id)
        if body.expected_version_id != current:
            seen = s.get(InstructionVersion, body.expected_version_id)
            raise Conflict(f"The instructions were changed since version {_number(seen, body.expected_version_id)} "
                           f"(the current version is {current_version_number(s, stream.id)}); reload them and "
                           "apply your edit again.")
    changed = False
    if "name" in sent and body.name != stream.name:
        assert body.name is not None  # the schema refuses null
        _check_name_free(s, body.name, stream.id)
        stream.name, changed = body.name, True
    if "description" in sent and body.description != stream.description:
        stream.description, changed = body.description, True
    if "settings" in sent:
        settings = body.settings.stored() if body.settings else None
        if settings != (stream.settings or None):
            stream.settings, changed = settings, True
    if "archived" in sent and body.archived != stream.archived:
        stream.archived, changed = bool(body.archived), True
    if "chat_instructions" in sent and body.chat_instructions != (stream.chat_instructions or None):
        _record_version(s, stream, body.chat_instructions, user.id, body.note)
        changed = True
    if changed:
        stream.updated_by, stream.updated_at = user.id, utcnow()
    s.flush()
    return read(s, stream.id)


def restore(s: Session, user: CurrentUserInfo, stream_id: int, body: InstructionRestore) -> StreamRead:
    """A new version with an old version's text: history only grows, so the restore itself is on record."""
    stream = get_stream(s, stream_id, lock=True)
    old = _version(s, stream.id, body.version_id)
    if (old.chat_instructions or None) == (stream.chat_instructions or None):
        raise Conflict(f"Version {old.number} has the same text as the current instructions; nothing to restore.")
    note = f"Restored version {old.number}" + (f": {body.note}" if body.note else "")
    _record_version(s, stream, old.chat_instructions, user.id, note[:MAX_NOTE])
    stream.updated_by, stream.updated_at = user.id, utcnow()
    s.flush()
    return read(s, stream.id)


# -- history and diff (admins) -------------------------------------------------------------------------
def _version(s: Session, stream_id: int, version_id: int) -> InstructionVersion:
    version = s.get(InstructionVersion, version_id)
    if version is None or version.stream_id != stream_id:
        raise NotFound(f"Instruction version {version_id} not found in research stream {stream_id}.")
    return version


def _number(version: InstructionVersion | None, fallback: int) -> int:
    return version.number if version is not None else fallback


def _version_reads(s: Session, versions: list[InstructionVersion], current: int | None) -> list[VersionRead]:
    names = _usernames(s, (v.created_by for v in versions))
    return [VersionRead(id=v.id, number=v.number, stream_id=v.stream_id, text=v.chat_instructions, note=v.note,
                        created_by=names.get(v.created_by) if v.created_by else None, created_at=v.created_at,
                        current=v.id == current) for v in versions]


def history(s: Session, stream_id: int) -> list[VersionRead]:
    """Every version, newest first (ids grow with time; created_at may tie within a second)."""
    get_stream(s, stream_id)
    versions = list(s.scalars(select(InstructionVersion).where(InstructionVersion.stream_id == stream_id)
                              .order_by(InstructionVersion.id.desc())))
    return _version_reads(s, versions, versions[0].id if versions else None)


def diff(s: Session, stream_id: int, from_id: int | None = None, to_id: int | None = None) -> DiffRead:
    """`to` defaults to the current version, `from` to the version before `to` (empty text before the first)."""
    get_stream(s, stream_id)
    ordered = list(s.scalars(select(InstructionVersion).where(InstructionVersion.stream_id == stream_id)
                             .order_by(InstructionVersion.id)))
    current = ordered[-1].id if ordered else None
    to_v = _version(s, stream_id, to_id) if to_id is not None else (ordered[-1] if ordered else None)
    if from_id is not None:
        from_v: InstructionVersion | None = _version(s, stream_id, from_id)
    else:
        earlier = [v for v in ordered if to_v is not None and v.id < to_v.id]
        from_v = earlier[-1] if earlier else None
    old = _lines(from_v.chat_instructions if from_v else None)
    new = _lines(to_v.chat_instructions if to_v else None)
    unified = "\n".join(difflib.unified_diff(old, new, fromfile=_label(from_v), tofile=_label(to_v), lineterm=""))
    lines = _diff_lines(old, new)
    reads = dict(zip([v for v in (from_v, to_v) if v is not None],
                     _version_reads(s, [v for v in (from_v, to_v) if v is not None], current), strict=True))
    return DiffRead(stream_id=stream_id, from_version=reads.get(from_v) if from_v else None,
                    to_version=reads.get(to_v) if to_v else None, unified=unified, lines=lines,
                    added=sum(d.op == "add" for d in lines), removed=sum(d.op == "remove" for d in lines))


def _lines(text: str | None) -> list[str]:
    return text.split("\n") if text else []


def _label(version: InstructionVersion | None) -> str:
    return f"version {version.number}" if version else "(empty)"


def _diff_lines(old: list[str], new: list[str]) -> list[DiffLine]:
    out: list[DiffLine] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            out += [DiffLine(op="context", text=old[i1 + k], old_line=i1 + k + 1, new_line=j1 + k + 1)
                    for k in range(i2 - i1)]
            continue
        out += [DiffLine(op="remove", text=old[i], old_line=i + 1, new_line=None) for i in range(i1, i2)]
        out += [DiffLine(op="add", text=new[j], old_line=None, new_line=j + 1) for j in range(j1, j2)]
    return out


# -- the chat ------------------------------------------------------------------------------------------
def _whole_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, str) and value.strip().isascii()
                                      and value.strip().lstrip("-").isdigit())


def clean_draft(draft: Any) -> str | None:
    """The sandbox draft as it would be saved (same cleaning and limit); a bad one is the caller's 422."""
    if not isinstance(draft, str):
        raise InvalidInput(f"{STREAM_DRAFT_KEY} must be a string.")
    try:
        return clean_text(draft, STREAM_DRAFT_KEY, MAX_INSTRUCTIONS) or None
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None


def stream_for_prompt(s: Session, stream_id: Any, draft: Any = None) -> tuple[dict[str, Any] | None, list[str]]:
    """The stream whose instructions apply to a turn (`{id, name, chat_instructions, version_id, draft,
    applied}`) and notices for the user. A stream that cannot be used (unknown, archived, not an id) is
    reported, never silently ignored; so is a draft that has no stream to apply to. `draft` (admins only,
    checked by the caller) replaces the saved instructions for this turn and is itself reported."""
    text = clean_draft(draft) if draft is not None else None
    unused_draft = ["The draft instructions are not applied: the turn has no usable research stream."]
    if stream_id in (None, ""):
        return None, unused_draft if draft is not None else []
    sid = as_db_id(stream_id)
    stream = s.get(ResearchStream, sid) if sid is not None else None
    if sid is None and not _whole_number(stream_id):
        notices = [f"Research stream {stream_id!r} is not a valid id; no stream instructions are applied."]
    elif stream is None:  # an id out of the database's range is a stream that does not exist, like any other
        notices = [f"Research stream {str(stream_id).strip()} does not exist; no stream instructions are applied."]
    elif stream.archived:
        notices = [f"Research stream \"{stream.name}\" is archived; its instructions are not applied."]
    else:
        notices = []
    if stream is None or stream.archived:
        return None, notices + (unused_draft if draft is not None else [])
    if draft is not None:
        notices.append(f"Sandbox: draft instructions for \"{stream.name}\" are used for this turn only; the "
                       "saved instructions are unchanged.")
    instructions = text if draft is not None else stream.chat_instructions
    return {"id": stream.id, "name": stream.name, "chat_instructions": instructions,
            "version_id": None if draft is not None else current_version_id(s, stream.id),
            "version_number": None if draft is not None else current_version_number(s, stream.id),
            "draft": draft is not None, "applied": bool((instructions or "").strip())}, notices


def stream_info(stream: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the page is told about the active stream (the `conversation` event, the preview)."""
    if stream is None:
        return None
    return {k: stream[k] for k in ("id", "name", "version_id", "version_number", "draft", "applied")}
