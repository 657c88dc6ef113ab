"""`/api/chat`: one turn as Server-Sent Events, and the admins' prompt preview."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field
from sse_starlette import EventSourceResponse

from backend.chat.service import ChatRequest, ChatService
from backend.chat.sse import sse_response
from backend.db.ids import DbId
from backend.db.session import Database
from backend.deps import AdminUser, ChatDep, CurrentUser, DbDep
from backend.errors import Forbidden, error_responses
from backend.streams.service import STREAM_DRAFT_KEY

router = APIRouter(prefix="/api/chat", tags=["chat"], responses=error_responses(401, 403, 422))


class PromptPreviewRequest(BaseModel):
    """The preview of a whole page context, as a chat request would send it (drafts too long for a URL)."""

    context: dict[str, Any] = Field(default_factory=dict)


@router.post("/stream", response_class=EventSourceResponse, responses=error_responses(400, 404, 409))
async def stream(body: ChatRequest, user: CurrentUser, chat: ChatDep) -> EventSourceResponse:
    """Run one turn and stream its events. Errors before the first byte are HTTP statuses (404 for a
    conversation that is not yours, 409 while another turn runs in it); after it they are `error` events."""
    if body.context.get(STREAM_DRAFT_KEY) is not None and not user.is_admin:
        raise Forbidden("Only admins can try draft stream instructions.")
    turn = await chat.begin(user.id, body)
    return sse_response(chat.run(turn))


@router.get("/prompt-preview")
def prompt_preview(user: AdminUser, db: DbDep, chat: ChatDep, page: str | None = None, tab: str | None = None,
                   subtab: str | None = None, stream_id: DbId | None = None,
                   draft: str | None = None) -> dict[str, Any]:
    """The exact system prompt and resolved tools/payloads a turn with this context would use: the context
    `{current_page: page, active_tab: tab, active_subtab: subtab, stream_id}` (absent values left out),
    with `draft` as its `stream_draft_instructions`."""
    values = {"current_page": page, "active_tab": tab, "active_subtab": subtab, "stream_id": stream_id,
              STREAM_DRAFT_KEY: draft}
    return _preview(chat, db, {k: v for k, v in values.items() if v is not None})


@router.post("/prompt-preview", responses=error_responses(400))
def prompt_preview_for_context(body: PromptPreviewRequest, user: AdminUser, db: DbDep,
                               chat: ChatDep) -> dict[str, Any]:
    """The same for a full chat `context` (page state, `stream_draft_instructions`…)."""
    return _preview(chat, db, body.context)


def _preview(chat: ChatService, db: Database, context: dict[str, Any]) -> dict[str, Any]:
    with db.session() as s:
        resolved, system, _staged, notices, active = chat.prepare_prompt(s, context)
    return {"system_prompt": system.text, "system_blocks": system.blocks(), "notices": notices,
            "stream": active, "page": resolved.page.page if resolved.page else None,
            "tools": resolved.tool_names, "payloads": resolved.payload_names}
