from __future__ import annotations

from typing import Any

import anyio
from fastapi import APIRouter, Request
from pydantic import BaseModel, Field
from sse_starlette import EventSourceResponse

from backend.auth.deps import AdminUser, CurrentUser, DbDep
from backend.chat.service import ChatRequest, ChatService
from backend.chat.sse import sse_response
from backend.db.session import Database
from backend.errors import Forbidden
from backend.streams.service import STREAM_DRAFT_KEY

router = APIRouter(prefix="/api/chat", tags=["chat"])


def chat_service(request: Request) -> ChatService:
    return request.app.state.chat


class PromptPreviewRequest(BaseModel):
    """The preview of a whole page context, as a chat request would send it (drafts too long for a URL)."""

    context: dict[str, Any] = Field(default_factory=dict)


@router.post("/stream", response_class=EventSourceResponse)
async def stream(body: ChatRequest, user: CurrentUser, request: Request) -> EventSourceResponse:
    """Run one turn and stream its events. Errors before the first byte are HTTP statuses (404 for a
    conversation that is not yours, 409 while another turn runs in it, 429 over a quota); after it they are
    `error` events."""
    if body.context.get(STREAM_DRAFT_KEY) is not None and not user.is_admin:
        raise Forbidden("Only admins can try draft stream instructions.")
    chat = chat_service(request)
    await request.app.state.quotas.admit_turn(user.id)  # 429 + Retry-After: streams, rate, daily budget
    turn = await chat.begin(user.id, body)
    return sse_response(chat.run(turn))


@router.get("/prompt-preview")
async def prompt_preview(request: Request, user: AdminUser, db: DbDep, page: str | None = None,
                         tab: str | None = None, subtab: str | None = None, stream_id: int | None = None,
                         draft: str | None = None) -> dict[str, Any]:
    """The exact system prompt and resolved tools/payloads a turn with this context would use: the context
    `{current_page: page, active_tab: tab, active_subtab: subtab, stream_id}` (absent values left out),
    with `draft` as its `stream_draft_instructions`."""
    values = {"current_page": page, "active_tab": tab, "active_subtab": subtab, "stream_id": stream_id,
              STREAM_DRAFT_KEY: draft}
    return await _preview(request, db, {k: v for k, v in values.items() if v is not None})


@router.post("/prompt-preview")
async def prompt_preview_for_context(body: PromptPreviewRequest, request: Request, user: AdminUser,
                                     db: DbDep) -> dict[str, Any]:
    """The same for a full chat `context` (page state, `stream_draft_instructions`…)."""
    return await _preview(request, db, body.context)


async def _preview(request: Request, db: Database, context: dict[str, Any]) -> dict[str, Any]:
    chat = chat_service(request)

    def run() -> dict[str, Any]:
        with db.session() as s:
            resolved, system, _staged, notices, active = chat.prepare_prompt(s, context)
        return {"system_prompt": system.text, "system_blocks": system.blocks(), "notices": notices,
                "stream": active, "page": resolved.page.page if resolved.page else None,
                "tools": resolved.tool_names, "payloads": resolved.payload_names}

    return await anyio.to_thread.run_sync(run)
