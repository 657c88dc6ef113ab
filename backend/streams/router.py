"""`/api/streams`: everyone signed in reads; admins create, change, archive, and see the instruction history.

Routes that change a stream depend on `stream_editor`, which runs before the body is validated: a non-admin
gets 403 for a stream that exists and 404 for one that does not, whatever the body says.
"""

from __future__ import annotations

from typing import Annotated

import anyio
from fastapi import APIRouter, Depends, Query

from backend.auth.deps import AdminUser, CurrentUser, DbDep
from backend.auth.service import CurrentUserInfo
from backend.streams import service
from backend.streams.schemas import DiffRead, InstructionRestore, StreamCreate, StreamRead, StreamUpdate, VersionRead

router = APIRouter(prefix="/api/streams", tags=["streams"])


async def stream_editor(stream_id: int, user: CurrentUser, db: DbDep) -> CurrentUserInfo:
    def check() -> None:
        with db.session() as s:
            service.require_editor(s, user, stream_id)
    await anyio.to_thread.run_sync(check)
    return user


StreamEditor = Annotated[CurrentUserInfo, Depends(stream_editor)]


@router.get("")
async def list_streams(user: CurrentUser, db: DbDep, include_archived: bool = False) -> list[StreamRead]:
    def run() -> list[StreamRead]:
        with db.session() as s:
            return service.list_streams(s, include_archived)
    return await anyio.to_thread.run_sync(run)


@router.post("", status_code=201)
async def create_stream(body: StreamCreate, user: AdminUser, db: DbDep) -> StreamRead:
    def run() -> StreamRead:
        with db.session() as s:
            return service.create(s, user, body)
    return await anyio.to_thread.run_sync(run)


@router.get("/{stream_id}")
async def get_stream(stream_id: int, user: CurrentUser, db: DbDep) -> StreamRead:
    def run() -> StreamRead:
        with db.session() as s:
            return service.read(s, stream_id)
    return await anyio.to_thread.run_sync(run)


@router.patch("/{stream_id}")
async def update_stream(stream_id: int, body: StreamUpdate, user: StreamEditor, db: DbDep) -> StreamRead:
    def run() -> StreamRead:
        with db.session() as s:
            return service.update(s, user, stream_id, body)
    return await anyio.to_thread.run_sync(run)


@router.get("/{stream_id}/instructions/history")
async def instruction_history(stream_id: int, user: StreamEditor, db: DbDep) -> list[VersionRead]:
    def run() -> list[VersionRead]:
        with db.session() as s:
            return service.history(s, stream_id)
    return await anyio.to_thread.run_sync(run)


@router.get("/{stream_id}/instructions/diff")
async def instruction_diff(stream_id: int, user: StreamEditor, db: DbDep,
                           from_id: Annotated[int | None, Query(alias="from")] = None,
                           to_id: Annotated[int | None, Query(alias="to")] = None) -> DiffRead:
    def run() -> DiffRead:
        with db.session() as s:
            return service.diff(s, stream_id, from_id, to_id)
    return await anyio.to_thread.run_sync(run)


@router.post("/{stream_id}/instructions/restore")
async def restore_instructions(stream_id: int, body: InstructionRestore, user: StreamEditor,
                               db: DbDep) -> StreamRead:
    def run() -> StreamRead:
        with db.session() as s:
            return service.restore(s, user, stream_id, body)
    return await anyio.to_thread.run_sync(run)
