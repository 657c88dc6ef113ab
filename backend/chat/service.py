"""The chat as its routes see it: send a message (a turn begins, this worker runs it, the response reads
it), resume a turn from any worker, stop one.

A message's path: `router.stream` → `ChatService.submit` → `begin.begin` (one transaction, in a thread)
→ `Supervisor.launch` (a `TurnRunner` task appends the turn's events to its `TurnLog`) → `read` (this
response's reader of that log) → `sse.sse_response` (the bytes). What the response streams is a reader,
so a client that leaves, freezes or reloads changes nothing about the answer, and `resume` attaches to
it again from any worker. One send is one turn: an `Idempotency-Key` seen before attaches to its turn.
Persistence points are short sessions in worker threads (`chat/turns.py`); none is open while the
model streams.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import anyio
from sqlalchemy.orm import Session
from sse_starlette.sse import AppStatus

from backend.agent.llm import LLM
from backend.agent.state import LoopLimits
from backend.chat import turns
from backend.chat.begin import Begun, ChatRequest, begin
from backend.chat.fanout import Fanout
from backend.chat.log import Frame
from backend.chat.supervisor import Supervisor
from backend.conversations.service import get_owned
from backend.db.session import Database
from backend.errors import Draining, NotFound
from backend.observability.observe import reading
from backend.sources import Sources


class ChatService:
    def __init__(self, db: Database, llm: LLM, sources: Sources | None = None,
                 limits: LoopLimits | None = None, *, flush_seconds: float = 0.025,
                 safety_seconds: float = 2.0, coalesce_seconds: float = 0.0, busy_at: int = 50) -> None:
        self.db = db
        self.llm = llm
        self.sources = sources
        self.supervisor = Supervisor(db, llm, sources, limits or LoopLimits())
        # The supervisor's, named here for who holds the service (the lifespan, tests' tuning).
        self.limits, self.saves, self.presence = self.supervisor.limits, self.supervisor.saves, self.supervisor.presence
        self.saves.flush_every = flush_seconds
        self.supervisor.coalesce, self.supervisor.busy_at = coalesce_seconds, busy_at
        # This process's readers of turns that run elsewhere (chat/fanout.py).
        self.fanout = Fanout(db, self.presence, on_stale=self._gone, on_readers=self.saves.watch,
                             safety_seconds=safety_seconds)
        self.admit_stream: Callable[[Session, int], None] = lambda _s, _user_id: None  # the app's Quotas.admit_stream

    @property
    def poll_seconds(self) -> float:
        return self.supervisor.poll_seconds

    @poll_seconds.setter
    def poll_seconds(self, value: float) -> None:
        self.supervisor.poll_seconds = value

    @property
    def draining(self) -> bool:
        """From SIGTERM (uvicorn's exit signal, as sse-starlette records it) or the first stream told to
        resume elsewhere: a send is refused 503, so it is retried on another instance."""
        return bool(AppStatus.should_exit) or self.supervisor.closing

    async def submit(self, sender: Callable[[], int], req: ChatRequest,
                     key: str | None = None) -> AsyncIterator[Frame]:
        """Start a turn (or find the one this key started) and return a reader of it from its first event.
        `sender` checks who sends (the session, the quotas) and returns their user id; it runs in the same
        thread as the turn's transaction, so a turn begins in one thread hop. Refusals (401, 403, 404,
        409, 422, 429, 503 while draining) are raised here, before the first byte."""
        if self.draining:  # in before the middleware refused (`RefuseWhileDraining`): refused the same
            raise Draining()
        begun = await anyio.to_thread.run_sync(self._begin, sender, req, key)
        if begun.turn is not None:
            self.supervisor.launch(begun.turn)
        return self.read(begun.turn_id, 0)

    def _begin(self, sender: Callable[[], int], req: ChatRequest, key: str | None) -> Begun:
        return begin(self.db, self.llm, self.sources, self.presence, sender, req, key, self.admit_stream)

    async def resume(self, sender: Callable[[], int], conversation_id: int, after: int,
                     turn_id: str | None = None) -> AsyncIterator[Frame]:
        """A reader of the conversation's running or latest turn — or of `turn_id`, the turn the client was
        reading, so that ids of an earlier turn never read a newer one from its middle — from the event
        after `after` (`sender` as for `submit`, in the same thread hop)."""
        def find() -> str:
            user_id = sender()
            with self.db.session() as s:
                get_owned(s, user_id, conversation_id)
                turn = (turns.latest(s, conversation_id) if turn_id is None
                        else turns.of_conversation(s, conversation_id, turn_id))
                if turn is None:
                    raise NotFound(f"Conversation {conversation_id} has no such turn to resume.")
                return turn.id
        return self.read(await anyio.to_thread.run_sync(find), after)

    async def read(self, turn_id: str, after: int) -> AsyncIterator[Frame]:
        """Frames with id > `after` until the terminal one: from memory when the turn runs here, else from
        the database. Ends by raising `Closing` when this server shuts down first."""
        supervisor = self.supervisor
        runner = supervisor.running(turn_id)
        runner = runner or await supervisor.continue_turn(turn_id)  # a turn its worker left: go on with it here
        if runner is not None:
            with reading("local"):
                async for frame in runner.log.follow(after):
                    yield frame
            return

        def stored(n: int) -> list[Frame]:
            with self.db.session() as s:
                return turns.frames_for_reader(s, turn_id, n)

        async def read(n: int) -> list[Frame]:
            return await anyio.to_thread.run_sync(stored, n)

        with reading("remote"):
            async for frame in self.fanout.follow(turn_id, after, read):
                yield frame

    async def _gone(self, turn_id: str) -> None:
        """A turn read here whose worker is gone: it goes on here, or gets its end."""
        if await self.supervisor.continue_turn(turn_id) is None:
            def interrupt_if_stale() -> None:
                with self.db.session() as s:
                    turns.interrupt_if_stale(s, turn_id, self.presence)
            await anyio.to_thread.run_sync(interrupt_if_stale)

    async def stop(self, user_id: int, conversation_id: int) -> bool:
        return await self.supervisor.stop(user_id, conversation_id)

    def close_readers(self) -> None:
        self.supervisor.close_readers()
        self.fanout.close()
