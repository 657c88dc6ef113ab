"""`/api/conversations`: the signed-in user's conversations; another user's is a 404, never a 403."""

from __future__ import annotations

from typing import Annotated

from anyio import from_thread
from fastapi import APIRouter, Depends, Request, Response

from backend.agent.llm import LLM
from backend.agent.schemas import Card
from backend.auth.deps import CurrentUser
from backend.conversations import config, service
from backend.conversations.schemas import (
    App,
    ConfigAck,
    ConfigUpdate,
    ConversationConfig,
    ConversationDetail,
    ConversationRead,
    ConversationUpdate,
    DecisionCreate,
    RewindCreate,
    VersionSwitch,
)
from backend.db.ids import DbId
from backend.deps import DbDep, RunningTurnsDep
from backend.errors import error_responses
from backend.routing import OneHopRoute

router = APIRouter(prefix="/api/conversations", tags=["conversations"], responses=error_responses(401, 422),
                   route_class=OneHopRoute)
OWNED = error_responses(404)
WITH_BODY = error_responses(400, 404)


async def get_llm(request: Request) -> LLM:
    return request.app.state.llm


LlmDep = Annotated[LLM, Depends(get_llm)]


@router.get("")
def list_conversations(user: CurrentUser, db: DbDep, app: App = "kh") -> list[ConversationRead]:
    with db.session() as s:
        return service.list_for(s, user.id, app)


@router.get("/{conversation_id}", responses=OWNED)
def get_conversation(conversation_id: DbId, user: CurrentUser, db: DbDep) -> ConversationDetail:
    with db.session() as s:
        return service.detail(s, user.id, conversation_id)


@router.patch("/{conversation_id}", responses=WITH_BODY)
def rename_conversation(conversation_id: DbId, body: ConversationUpdate, user: CurrentUser,
                        db: DbDep) -> ConversationRead:
    with db.session() as s:
        return service.rename(s, user.id, conversation_id, body.title)


@router.get("/{conversation_id}/config", responses=OWNED)
def get_config(conversation_id: DbId, user: CurrentUser, db: DbDep, llm: LlmDep) -> ConversationConfig:
    """The model settings the conversation's next turn will use."""
    with db.session() as s:
        return config.read(s, llm, user.id, conversation_id)


@router.patch("/{conversation_id}/config", responses=WITH_BODY)
def update_config(conversation_id: DbId, body: ConfigUpdate, user: CurrentUser, db: DbDep,
                  llm: LlmDep) -> ConfigAck:
    """`config_update` → `config_ack`: store the conversation's model, max_tokens or compaction; the next
    turn uses them. A model that is not offered (`GET /api/chat/models`) is a 422."""
    with db.session() as s:
        return config.update(s, llm, user.id, conversation_id, body)


@router.delete("/{conversation_id}", status_code=204, response_class=Response, responses=OWNED)
def delete_conversation(conversation_id: DbId, user: CurrentUser, db: DbDep, turns: RunningTurnsDep) -> Response:
    from_thread.run(turns.stop, user.id, conversation_id)  # a running turn ends before its conversation does
    with db.session() as s:
        service.delete(s, user.id, conversation_id)
    return Response(status_code=204)


@router.post("/{conversation_id}/stop", responses=OWNED)
def stop_turn(conversation_id: DbId, user: CurrentUser, db: DbDep, turns: RunningTurnsDep) -> dict[str, bool]:
    """Stop the running turn; its partial answer is saved as `interrupted`. `stopped: true` means no turn
    generates in this conversation any more (a turn whose worker process died is marked interrupted at
    once, and the next turn may start); `stopped: false` means none was running."""
    with db.session() as s:
        service.get_owned(s, user.id, conversation_id)
    return {"stopped": from_thread.run(turns.stop, user.id, conversation_id)}


@router.post("/{conversation_id}/rewind", responses=error_responses(400, 404, 409))
def rewind(conversation_id: DbId, body: RewindCreate, user: CurrentUser, db: DbDep) -> ConversationDetail:
    """Set a user message and what followed it aside as an earlier version (edit and resend, regenerate): the
    conversation as it is now. The switcher shows on the message the next send makes."""
    with db.session() as s:
        return service.rewind(s, user.id, conversation_id, body.message_id)


@router.post("/{conversation_id}/versions/switch", responses=error_responses(400, 404, 409))
def switch_version(conversation_id: DbId, body: VersionSwitch, user: CurrentUser,
                   db: DbDep) -> ConversationDetail:
    """Show another version of the tail starting at `message_id` (one of the conversation's `versions`); the
    one shown now is kept. An unknown version is a 404; a running turn, a 409."""
    with db.session() as s:
        return service.switch_version(s, user.id, conversation_id, body.message_id, body.version)


@router.post("/{conversation_id}/payloads/{payload_id}/decision", responses=WITH_BODY)
def decide(conversation_id: DbId, payload_id: str, body: DecisionCreate, user: CurrentUser,
           db: DbDep) -> Card:
    with db.session() as s:
        return service.record_decision(s, user.id, conversation_id, payload_id, body.decision)
