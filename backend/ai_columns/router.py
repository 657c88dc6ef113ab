"""`POST /api/ai-columns/evaluate`: one AI column over the loaded rows, streamed as Server-Sent Events."""

from __future__ import annotations

from fastapi import APIRouter, Request
from sse_starlette import EventSourceResponse

from backend.ai_columns.schemas import EvaluateRequest
from backend.ai_columns.service import AiColumnService
from backend.auth.deps import CurrentUser
from backend.chat.sse import sse_response

router = APIRouter(prefix="/api/ai-columns", tags=["ai-columns"])


def column_service(request: Request) -> AiColumnService:
    """One service per app, built on first use from what the app already holds."""
    state = request.app.state
    service: AiColumnService | None = getattr(state, "ai_columns", None)
    if service is None:
        service = AiColumnService(state.db, state.llm, state.sources,
                                  concurrency=state.settings.ai_column_concurrency)
        state.ai_columns = service
    return service


@router.post("/evaluate", response_class=EventSourceResponse)
async def evaluate(body: EvaluateRequest, user: CurrentUser, request: Request) -> EventSourceResponse:
    """Rows stream back as they finish (`row` / `row_error`, each followed by `progress`), then `complete`;
    `error` when the column cannot run. Bad input is a 422 before any byte is sent; 429 over the user's
    runs per minute."""
    await request.app.state.quotas.admit_ai_column_run(user.id)
    return sse_response(column_service(request).run(body))
