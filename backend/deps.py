"""The FastAPI dependencies every router shares: what the app holds on `app.state` (built once in
`backend.main.create_app`). A service of one package has its dependency beside its router
(`backend.chat.router.ChatDep`, `backend.ai_columns.router.AiColumnsDep`, the model a conversation
may use: `backend.conversations.router.LlmDep`), and who sends a request is
`backend.auth.deps`, so this module stands below every package that has routes.

They are `async def`: they only read `app.state`, and FastAPI runs a sync dependency in its threadpool,
where each hop waits for a turn of the event loop (beside a hundred streams, what made a GET slow).
"""

from __future__ import annotations

from typing import Annotated, Protocol

from fastapi import Depends, Request

from backend.config import Settings
from backend.db.session import Database
from backend.sources import Sources


class RunningTurns(Protocol):
    """What a conversation's routes ask of the chat (`backend.chat.service.ChatService`): that its
    running turn stops before the conversation changes. True when a turn was running."""

    async def stop(self, user_id: int, conversation_id: int) -> bool: ...


async def get_db(request: Request) -> Database:
    return request.app.state.db


async def get_settings(request: Request) -> Settings:
    return request.app.state.settings


async def get_sources(request: Request) -> Sources:
    return request.app.state.sources


async def get_running_turns(request: Request) -> RunningTurns:
    return request.app.state.chat


DbDep = Annotated[Database, Depends(get_db)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
SourcesDep = Annotated[Sources, Depends(get_sources)]
RunningTurnsDep = Annotated[RunningTurns, Depends(get_running_turns)]
