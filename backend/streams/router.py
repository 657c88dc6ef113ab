"""`/api/streams`: everyone signed in reads; admins create, change, archive, and see the instruction history.

A plain user reads each stream's summary (`StreamSummary`); admins read it whole (`StreamRead`, with the
chat instructions and editors). Routes that change a stream depend on `stream_editor`, which runs before the
body is validated: a non-admin gets 403 for a stream that exists and 404 for one that does not, whatever the
body says.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from backend.auth.deps import AdminUser, CurrentUser
from backend.auth.service import CurrentUserInfo
from backend.db.ids import DbId
from backend.deps import DbDep
from backend.errors import error_responses
from backend.routing import OneHopRoute
from backend.streams import service
from backend.streams.schemas import (
    DiffRead,
    InstructionRestore,
    StreamCreate,
    StreamRead,
    StreamSummary,
    StreamUpdate,
    VersionRead,
)

router = APIRouter(prefix="/api/streams", tags=["streams"], responses=error_responses(401, 422),
                   route_class=OneHopRoute)
EDITING = error_responses(403, 404)
WRITING = error_responses(400, 403, 404, 409)


def stream_editor(stream_id: DbId, user: CurrentUser, db: DbDep) -> CurrentUserInfo:
    with db.session() as s:
        service.require_editor(s, user, stream_id)
    return user


StreamEditor = Annotated[CurrentUserInfo, Depends(stream_editor)]


@router.get("")
def list_streams(user: CurrentUser, db: DbDep, include_archived: bool = False) -> list[StreamRead | StreamSummary]:
    """Admins get `StreamRead`s, everyone else `StreamSummary`s."""
    with db.session() as s:
        return service.list_streams(s, user, include_archived)


@router.post("", status_code=201, responses=error_responses(400, 403, 409))
def create_stream(body: StreamCreate, user: AdminUser, db: DbDep) -> StreamRead:
    with db.session() as s:
        return service.create(s, user, body)


@router.get("/{stream_id}", responses=error_responses(404))
def get_stream(stream_id: DbId, user: CurrentUser, db: DbDep) -> StreamRead | StreamSummary:
    """An admin gets the `StreamRead`, everyone else the `StreamSummary`."""
    with db.session() as s:
        return service.view(s, user, stream_id)


@router.patch("/{stream_id}", responses=WRITING)
def update_stream(stream_id: DbId, body: StreamUpdate, user: StreamEditor, db: DbDep) -> StreamRead:
    with db.session() as s:
        return service.update(s, user, stream_id, body)


@router.get("/{stream_id}/instructions/history", responses=EDITING)
def instruction_history(stream_id: DbId, user: StreamEditor, db: DbDep) -> list[VersionRead]:
    with db.session() as s:
        return service.history(s, stream_id)


@router.get("/{stream_id}/instructions/diff", responses=EDITING)
def instruction_diff(stream_id: DbId, user: StreamEditor, db: DbDep,
                     from_id: Annotated[DbId | None, Query(alias="from")] = None,
                     to_id: Annotated[DbId | None, Query(alias="to")] = None) -> DiffRead:
    with db.session() as s:
        return service.diff(s, stream_id, from_id, to_id)


@router.post("/{stream_id}/instructions/restore", responses=WRITING)
def restore_instructions(stream_id: DbId, body: InstructionRestore, user: StreamEditor, db: DbDep) -> StreamRead:
    with db.session() as s:
        return service.restore(s, user, stream_id, body)
