"""`POST /api/ai-columns/evaluate`: one AI column over the loaded rows, streamed as Server-Sent Events."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from pydantic import Field
from sse_starlette import EventSourceResponse

from backend.ai_columns.schemas import ColumnEvent, EvaluateRequest
from backend.ai_columns.service import AiColumnService
from backend.auth.deps import CurrentUser
from backend.chat.sse import events_response
from backend.errors import error_responses
from backend.openapi import event_stream
from backend.routing import OneHopRoute

router = APIRouter(prefix="/api/ai-columns", tags=["ai-columns"], responses=error_responses(400, 401, 422),
                   route_class=OneHopRoute)


async def ai_columns(request: Request) -> AiColumnService:
    """One service per app, built on first use from what the app already holds (and its settings then)."""
    state = request.app.state
    service: AiColumnService | None = getattr(state, "ai_columns", None)
    if service is None:
        service = AiColumnService(state.db, state.llm, state.sources,
                                  concurrency=state.settings.ai_column_concurrency, quotas=state.quotas)
        state.ai_columns = service
    return service


AiColumnsDep = Annotated[AiColumnService, Depends(ai_columns)]


@router.post("/evaluate", response_class=EventSourceResponse,
             responses={200: event_stream(Annotated[ColumnEvent, Field(discriminator="type")],
                                           "The column's events, one per SSE frame"), **error_responses(429)})
async def evaluate(body: EvaluateRequest, user: CurrentUser, columns: AiColumnsDep,
                   request: Request) -> EventSourceResponse:
    """Rows stream back as they finish (`row` / `row_error`, each followed by `progress`), then `complete`;
    `error` when the column cannot run. Bad input is a 422 before any byte is sent; 429 when the user's
    daily token budget is spent (each row's model call counts in it), or over their runs or rows a
    minute, or runs at once. Results are cached per user: another user's run of the same column is never
    served to you."""
    slot = await request.app.state.quotas.admit_ai_column_run(user.id, len(body.ids))
    return events_response(columns.run(body, user.id, slot))
