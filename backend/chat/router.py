from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request
from pydantic import BaseModel, Field
from sse_starlette import EventSourceResponse

from backend.agent.schemas import ChatEvent, StreamRef
from backend.auth.deps import AdminUser, CurrentUser, SessionToken, authenticate
from backend.chat.begin import ChatRequest
from backend.chat.prompt import prepare_prompt
from backend.chat.service import ChatService
from backend.chat.sse import sse_response
from backend.conversations import config
from backend.conversations.schemas import ChatModels
from backend.db.ids import DbId, as_db_id
from backend.db.session import Database
from backend.deps import DbDep
from backend.errors import Forbidden, error_responses
from backend.openapi import event_stream
from backend.routing import OneHopRoute
from backend.streams.service import STREAM_DRAFT_KEY

router = APIRouter(prefix="/api/chat", tags=["chat"], responses=error_responses(401, 403, 422), route_class=OneHopRoute)
resume_router = APIRouter(prefix="/api/conversations", tags=["chat"], responses=error_responses(401, 422),
                          route_class=OneHopRoute)


async def chat_service(request: Request) -> ChatService:
    """The app's one `ChatService` (`backend.main.create_app` builds it)."""
    return request.app.state.chat


ChatDep = Annotated[ChatService, Depends(chat_service)]


class PromptPreview(BaseModel):
    """What a turn with this context would be told, for the stream editor's preview."""

    system_prompt: str
    system_blocks: list[dict[str, Any]]  # the Messages API `system` value
    page_context: str
    notices: list[str]
    stream: StreamRef | None
    page: str | None
    tools: list[str]
    payloads: list[str]


class PromptPreviewRequest(BaseModel):
    """The preview of a whole page context, as a chat request would send it (drafts too long for a URL)."""

    context: dict[str, Any] = Field(default_factory=dict)


@router.post("/stream", response_class=EventSourceResponse,
             responses={200: event_stream(ChatEvent, "The turn's events, one per SSE frame"),
                        **error_responses(400, 404, 409, 429, 503)})
async def stream(body: ChatRequest, token: SessionToken, db: DbDep, chat: ChatDep, request: Request,
                 idempotency_key: Annotated[str | None, Header(min_length=1, max_length=100)] = None,
                 ) -> EventSourceResponse:
    """Run one turn and stream its events. Errors before the first byte are HTTP statuses (404 for a
    conversation that is not yours, 409 while another turn runs in it, 422 for an `Idempotency-Key`
    reused with another body, 429 over a quota); after it they are `error` events. The same key again
    attaches to the turn it started (replayed from its first event), running or finished: one send is
    one turn."""
    quotas = request.app.state.quotas

    def sender() -> int:  # in the thread that begins the turn: one hop from request to first event
        user = authenticate(db, token)
        if body.context.get(STREAM_DRAFT_KEY) is not None and not user.is_admin:
            raise Forbidden("Only admins can try draft stream instructions.")
        quotas.admit_turn(user.id)  # 429 + Retry-After: rate, daily budget (the stream cap: where the turn claims)
        return user.id

    return sse_response(await chat.submit(sender, body, idempotency_key), chat.close_readers)


@resume_router.get("/{conversation_id}/stream", response_class=EventSourceResponse,
                   responses={200: event_stream(ChatEvent, "The turn's events after Last-Event-ID, one per frame"),
                              **error_responses(404)})
async def resume(conversation_id: DbId, token: SessionToken, db: DbDep, chat: ChatDep,
                 last_event_id: Annotated[str | None, Header(max_length=20)] = None,
                 turn_id: Annotated[str | None, Query(min_length=1, max_length=64,
                                                      description="The turn whose Last-Event-ID this is (its "
                                                                  "`conversation` event's `turn_id`): a newer "
                                                                  "turn is then never read from its middle")] = None,
                 ) -> EventSourceResponse:
    """Attach to the conversation's running or latest turn (or to `turn_id`): the events after
    `Last-Event-ID` (all of them without it), then live ones until the terminal event. Never starts a
    generation. 404 when the conversation has no turn (or not that one)."""
    after = as_db_id(last_event_id) or 0  # ASCII digits only: "²" is a digit to str.isdigit, not to int()
    frames = await chat.resume(lambda: authenticate(db, token).id, conversation_id, min(after, 10**9), turn_id)
    return sse_response(frames, chat.close_readers)


@router.get("/models")
def models(user: CurrentUser, chat: ChatDep) -> ChatModels:
    """The models a conversation may use and a new conversation's settings (the demo model alone when
    there is no API key)."""
    return config.choices(chat.llm)


@router.get("/prompt-preview")
def prompt_preview(user: AdminUser, db: DbDep, page: str | None = None, tab: str | None = None,
                   subtab: str | None = None, stream_id: DbId | None = None,
                   draft: str | None = None) -> PromptPreview:
    """The exact system prompt, the turn's page context and the resolved tools/payloads a turn with this
    context would use: the context `{current_page: page, active_tab: tab, active_subtab: subtab,
    stream_id}` (absent values left out), with `draft` as its `stream_draft_instructions`."""
    values = {"current_page": page, "active_tab": tab, "active_subtab": subtab, "stream_id": stream_id,
              STREAM_DRAFT_KEY: draft}
    return _preview(db, {k: v for k, v in values.items() if v is not None})


@router.post("/prompt-preview", responses=error_responses(400))
def prompt_preview_for_context(body: PromptPreviewRequest, user: AdminUser, db: DbDep) -> PromptPreview:
    """The same for a full chat `context` (page state, `stream_draft_instructions`…)."""
    return _preview(db, body.context)


def _preview(db: Database, context: dict[str, Any]) -> PromptPreview:
    with db.session() as s:
        prompt = prepare_prompt(s, context)
    system, resolved = prompt.system, prompt.resolved
    return PromptPreview(system_prompt=system.text, system_blocks=system.blocks(), page_context=system.page_context,
                         notices=prompt.notices, stream=prompt.stream,
                         page=resolved.page.page if resolved.page else None,
                         tools=resolved.tool_names, payloads=resolved.payload_names)
