"""`POST /api/ai-columns/evaluate`: one AI column over the loaded rows, streamed as Server-Sent Events."""

from __future__ import annotations

from fastapi import APIRouter
from sse_starlette import EventSourceResponse

from backend.ai_columns.schemas import EvaluateRequest
from backend.chat.sse import sse_response
from backend.deps import AiColumnsDep, CurrentUser
from backend.errors import error_responses

router = APIRouter(prefix="/api/ai-columns", tags=["ai-columns"], responses=error_responses(400, 401, 422))


@router.post("/evaluate", response_class=EventSourceResponse)
async def evaluate(body: EvaluateRequest, user: CurrentUser, columns: AiColumnsDep) -> EventSourceResponse:
    """Rows stream back as they finish (`row` / `row_error`, each followed by `progress`), then `complete`;
    `error` when the column cannot run. Bad input is a 422 before any byte is sent. Results are cached per
    user: another user's run of the same column is never served to you."""
    return sse_response(columns.run(body, user.id))
