from __future__ import annotations

from typing import Protocol

import anyio
from fastapi import APIRouter, Request, Response

from backend.agent.schemas import Card
from backend.auth.deps import CurrentUser, DbDep
from backend.conversations import service
from backend.conversations.schemas import (
    App,
    ConversationDetail,
    ConversationRead,
    ConversationUpdate,
    DecisionCreate,
)

router = APIRouter(prefix="/api/conversations", tags=["conversations"])


class TurnStopper(Protocol):
    """What these routes need of the chat service (`app.state.chat`), without importing the chat layer."""

    async def stop(self, user_id: int, conversation_id: int) -> bool: ...


@router.get("")
async def list_conversations(user: CurrentUser, db: DbDep, app: App = "kh") -> list[ConversationRead]:
    def run() -> list[ConversationRead]:
        with db.session() as s:
            return service.list_for(s, user.id, app)
    return await anyio.to_thread.run_sync(run)


@router.get("/{conversation_id}")
async def get_conversation(conversation_id: int, user: CurrentUser, db: DbDep) -> ConversationDetail:
    def run() -> ConversationDetail:
        with db.session() as s:
            return service.detail(s, user.id, conversation_id)
    return await anyio.to_thread.run_sync(run)


@router.patch("/{conversation_id}")
async def rename_conversation(conversation_id: int, body: ConversationUpdate, user: CurrentUser,
                              db: DbDep) -> ConversationRead:
    def run() -> ConversationRead:
        with db.session() as s:
            return service.rename(s, user.id, conversation_id, body.title)
    return await anyio.to_thread.run_sync(run)


@router.delete("/{conversation_id}", status_code=204)
async def delete_conversation(conversation_id: int, user: CurrentUser, db: DbDep,
                              request: Request) -> Response:
    chat: TurnStopper = request.app.state.chat

    def run() -> None:
        with db.session() as s:
            service.delete(s, user.id, conversation_id)
    await chat.stop(user.id, conversation_id)
    await anyio.to_thread.run_sync(run)
    return Response(status_code=204)


@router.post("/{conversation_id}/stop")
async def stop_turn(conversation_id: int, user: CurrentUser, db: DbDep, request: Request) -> dict[str, bool]:
    """Stop the running turn; its partial answer is saved as `interrupted`. Not running: stopped=false."""
    def check() -> None:
        with db.session() as s:
            service.get_owned(s, user.id, conversation_id)
    await anyio.to_thread.run_sync(check)
    chat: TurnStopper = request.app.state.chat
    return {"stopped": await chat.stop(user.id, conversation_id)}


@router.post("/{conversation_id}/payloads/{payload_id}/decision")
async def decide(conversation_id: int, payload_id: str, body: DecisionCreate, user: CurrentUser,
                 db: DbDep) -> Card:
    def run() -> Card:
        with db.session() as s:
            return service.record_decision(s, user.id, conversation_id, payload_id, body.decision)
    return await anyio.to_thread.run_sync(run)
