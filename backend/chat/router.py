from __future__ import annotations

from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Header, Request
from pydantic import BaseModel, Field
from sse_starlette import EventSourceResponse

from backend.agent.schemas import ChatEvent
from backend.auth.deps import AdminUser, CurrentUser, DbDep
from backend.chat.service import ChatRequest, ChatService
from backend.chat.sse import sse_response
from backend.db.session import Database
from backend.errors import Forbidden
from backend.openapi import event_stream
from backend.streams.service import STREAM_DRAFT_KEY

router = APIRouter(prefix="/api/chat", tags=["chat"])
resume_router = APIRouter(prefix="/api/conversations", tags=["chat"])


def chat_service(request: Request) -> ChatService:
    return request.app.state.chat


class PromptPreviewRequest(BaseModel):
    """The preview of a whole page context, as a chat request would send it (drafts too long for a URL)."""

    context: dict[str, Any] = Field(default_factory=dict)


@router.post("/stream", response_class=EventSourceResponse,
             responses={200: event_stream(ChatEvent, "The turn's events, one per SSE frame")})
async def stream(body: ChatRequest, user: CurrentUser, request: Request,
                 idempotency_key: Annotated[str | None, Header(min_length=1, max_length=100)] = None,
                 ) -> EventSourceResponse:
    """Run one turn and stream its events. Errors before the first byte are HTTP statuses (404 for a
    conversation that is not yours, 409 while another turn runs in it, 422 for an `Idempotency-Key`
    reused with another body, 429 over a quota); after it they are `error` events. The same key again attaches to the
    turn it started (replayed from its first event), running or finished: one send is one turn."""
    if body.context.get(STREAM_DRAFT_KEY) is not None and not user.is_admin:
        raise Forbidden("Only admins can try draft stream instructions.")
    chat = chat_service(request)
    await request.app.state.quotas.admit_turn(user.id)  # 429 + Retry-After: streams, rate, daily budget
    return sse_response(await chat.submit(user.id, body, idempotency_key), chat.close_readers)


@resume_router.get("/{conversation_id}/stream", response_class=EventSourceResponse,
                   responses={200: event_stream(ChatEvent, "The turn's events after Last-Event-ID, one per frame")})
async def resume(conversation_id: int, user: CurrentUser, request: Request,
                 last_event_id: Annotated[str | None, Header()] = None) -> EventSourceResponse:
    """Attach to the conversation's running or latest turn: the events after `Last-Event-ID` (all of
    them without it), then live ones until the terminal event. Never starts a generation."""
    after = int(last_event_id) if last_event_id and last_event_id.strip().isdigit() else 0
    chat = chat_service(request)
    return sse_response(await chat.resume(user.id, conversation_id, min(after, 10**9)), chat.close_readers)


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
        return {"system_prompt": system.text, "system_blocks": system.blocks(),
                "page_context": system.page_context, "notices": notices,
                "stream": active, "page": resolved.page.page if resolved.page else None,
                "tools": resolved.tool_names, "payloads": resolved.payload_names}

    return await anyio.to_thread.run_sync(run)
