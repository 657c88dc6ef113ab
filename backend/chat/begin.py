"""A turn begins in one transaction: its conversation claimed, its two messages and its row stored, and
everything it runs with prepared (`Turn`), or the turn an `Idempotency-Key` already began found."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, field_validator, model_validator
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from backend.agent.llm import LLM
from backend.agent.schemas import MessageExtras
from backend.chat import history as chat_history
from backend.chat import turns
from backend.chat.actions import ActionRequest, action_message, offered_action
from backend.chat.prompt import prepare_prompt
from backend.chat.turn import Turn
from backend.chat.workers import WorkerPresence
from backend.conversations import config
from backend.conversations.schemas import App, ConfigUpdate
from backend.conversations.service import get_owned
from backend.db.ids import DbId
from backend.db.models import ChatTurn, Conversation
from backend.db.session import Database
from backend.errors import Conflict, InvalidInput
from backend.sources import Sources
from backend.text import clip

MAX_CONTEXT_BYTES = 256_000  # stored with every user message: pages send summaries (≈250 B a row)


class ChatRequest(BaseModel):
    message: str = Field(min_length=1, max_length=20_000)
    context: dict[str, Any] = Field(default_factory=dict)
    conversation_id: DbId | None = None
    app: App | None = None
    # A clicked server action: `message` is its label (what the chat shows), this is what the model gets.
    action: ActionRequest | None = None
    config: ConfigUpdate | None = None  # model settings to store on the conversation before this turn

    @field_validator("message")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("message must not be blank")
        return value

    @field_validator("context")
    @classmethod
    def _bounded(cls, value: dict[str, Any]) -> dict[str, Any]:
        if len(json.dumps(value, default=str)) > MAX_CONTEXT_BYTES:
            raise ValueError(f"context is larger than {MAX_CONTEXT_BYTES // 1000} KB; send summaries, not records")
        return value

    @model_validator(mode="after")
    def _action_answers_an_offer(self) -> ChatRequest:
        if self.action is not None and self.conversation_id is None:
            raise ValueError("an action answers an offer in a conversation: conversation_id is required")
        return self


@dataclass(frozen=True)
class Begun:
    """The turn a send is: a new one (`turn`, for this worker to run), or the one its idempotency key
    began before (`turn` None: only read it)."""

    turn_id: str
    turn: Turn | None = None


def begin(db: Database, llm: LLM, sources: Sources | None, worker: WorkerPresence,
          sender: Callable[[], int], req: ChatRequest, key: str | None,
          admit: Callable[[Session, int], None] = lambda _s, _user_id: None) -> Begun:
    """Blocking: run in a thread. `sender` checks who sends and returns their user id (its refusals, and
    this one's 404, 409 and 422, are raised before the first byte). `admit` refuses a turn beyond the
    user's stream cap, in the transaction that claims the conversation (`backend.quotas.streams`)."""
    user_id = sender()
    fingerprint = _fingerprint(req)
    try:
        with db.session() as s:
            if key and (seen := turns.by_key(s, user_id, key)) is not None:
                return _same_request(seen, fingerprint)
            turn = _open(s, llm, sources, worker, user_id, req, key, fingerprint, admit)
            return Begun(turn.turn_id, turn)
    except (IntegrityError, Conflict):
        if not key:
            raise
        with db.session() as s:  # a concurrent send with the same key won: attach to its turn
            seen = turns.by_key(s, user_id, key)
        if seen is None:
            raise
        return _same_request(seen, fingerprint)


def _open(s: Session, llm: LLM, sources: Sources | None, worker: WorkerPresence, user_id: int,
          req: ChatRequest, key: str | None, fingerprint: str, admit: Callable[[Session, int], None]) -> Turn:
    context = req.context
    turn_id = uuid.uuid4().hex
    prompt = prepare_prompt(s, context)
    if req.conversation_id is None:  # made taken by this turn: nothing can run in it, or have run
        app = req.app or (prompt.resolved.page.app if prompt.resolved.page else "kh")
        conv = Conversation(user_id=user_id, app=app, title=clip(req.message, 60, squash=True),
                            **turns.lease(turn_id))
        s.add(conv)
        s.flush()
    else:
        conv = get_owned(s, user_id, req.conversation_id)
        if not turns.claim(s, conv.id, turn_id, worker):
            raise Conflict("A turn is already running in this conversation; stop it or wait for it to end.")
        turns.interrupt_stale(s, conv.id)  # a turn whose worker died leaves its progress, marked
    admit(s, user_id)  # the stream cap, counted with this claim in its transaction (429)
    if req.config is not None:
        config.apply(llm, conv, req.config)
    settings = config.effective(llm, conv)
    rows = turns.messages_of(s, conv.id) if req.conversation_id is not None else []  # (a new one has none)
    action = offered_action(rows, req.action) if req.action is not None else None
    messages = chat_history.build_history(rows, action_message(action) if action else req.message,
                                          prompt.system.page_context, compact=settings.compaction)
    sent = MessageExtras(sent_content=messages[-1]["content"], action=action).model_dump(
        mode="json", exclude_defaults=True)
    opened = MessageExtras(turn_id=turn_id, model=llm.label_for(settings.model), stream=prompt.stream)
    ids = turns.open_turn(s, turn_id=turn_id, conversation_id=conv.id, user_id=user_id, key=key,
                          fingerprint=fingerprint, message=req.message, context=context, sent=sent,
                          opened=opened.model_dump(mode="json"), worker_id=worker.id if worker.held else None)
    return Turn.make(
        turn_id=turn_id, user_id=user_id, conversation_id=conv.id, app=conv.app,
        user_message_id=ids.user_message_id, assistant_message_id=ids.assistant_message_id, messages=messages,
        prompt=prompt, context=context, config=settings, turns=1 + sum(1 for r in rows if r.role == "user"),
        sources=sources)


def _fingerprint(req: ChatRequest) -> str:
    body = json.dumps(req.model_dump(mode="json"), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(body.encode()).hexdigest()


def _same_request(seen: ChatTurn, fingerprint: str) -> Begun:
    if seen.request_hash != fingerprint:
        raise InvalidInput("This Idempotency-Key was already used for a different message; send the message "
                           "with a new key.")
    return Begun(seen.id)
