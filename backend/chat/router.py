from __future__ import annotations

from typing import Any

import anyio
from fastapi import APIRouter, Request
from sse_starlette import EventSourceResponse

from backend.auth.deps import AdminUser, CurrentUser, DbDep
from backend.chat.service import ChatRequest, ChatService
from backend.chat.sse import sse_response

router = APIRouter(prefix="/api/chat", tags=["chat"])


def chat_service(request: Request) -> ChatService:
    return request.app.state.chat


@router.post("/stream", response_class=EventSourceResponse)
async def stream(body: ChatRequest, user: CurrentUser, request: Request) -> EventSourceResponse:
    """Run one turn and stream its events. Errors before the first byte are HTTP statuses (404 for a
    conversation that is not yours, 409 while another turn runs in it); after it they are `error` events."""
    chat = chat_service(request)
    turn = await chat.begin(user.id, body)
    return sse_response(chat.run(turn))


@router.get("/prompt-preview")
async def prompt_preview(request: Request, user: AdminUser, db: DbDep, page: str | None = None,
                         tab: str | None = None, subtab: str | None = None,
                         stream_id: int | None = None) -> dict[str, Any]:
    """The exact system prompt and resolved tools/payloads a turn with this context would use."""
    context: dict[str, Any] = {"current_page": page, "active_tab": tab, "active_subtab": subtab,
                               "stream_id": stream_id}
    chat = chat_service(request)

    def run() -> dict[str, Any]:
        with db.session() as s:
            resolved, system, _staged, notices = chat.prepare_prompt(s, context)
        return {"system_prompt": system.text, "system_blocks": system.blocks(), "notices": notices,
                "page": resolved.page.page if resolved.page else None,
                "tools": resolved.tool_names, "payloads": resolved.payload_names}

    return await anyio.to_thread.run_sync(run)
