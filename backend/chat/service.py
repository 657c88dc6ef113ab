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

from backend.agent.llm import LLM
from backend.agent.state import LoopLimits
from backend.chat import turns
from backend.chat.begin import Begun, ChatRequest, begin
from backend.chat.log import Frame, follow_stored
from backend.chat.supervisor import Supervisor
from backend.conversations.service import get_owned
from backend.db.session import Database
from backend.errors import NotFound
from backend.observability.observe import reading
from backend.sources import Sources

READ_POLL_SECONDS = 0.25  # how often a reader of another worker's turn looks for events
IDLE_CHECKS = 8  # polls without news (~2 s) before a reader sees whether the turn's worker is gone


class ChatService:
    def __init__(self, db: Database, llm: LLM, sources: Sources | None = None,
                 limits: LoopLimits | None = None) -> None:
        self.db = db
        self.llm = llm
        self.sources = sources
        self.supervisor = Supervisor(db, llm, sources, limits or LoopLimits())
        # The supervisor's, named here for who holds the service (the lifespan, tests' tuning).
        self.limits, self.saves, self.presence = self.supervisor.limits, self.supervisor.saves, self.supervisor.presence
        self.admit_stream: Callable[[Session, int], None] = lambda _s, _user_id: None  # the app's Quotas.admit_stream

    @property
    def poll_seconds(self) -> float:
        return self.supervisor.poll_seconds

    @poll_seconds.setter
    def poll_seconds(self, value: float) -> None:
        self.supervisor.poll_seconds = value

    async def submit(self, sender: Callable[[], int], req: ChatRequest,
                     key: str | None = None) -> AsyncIterator[Frame]:
        """Start a turn (or find the one this key started) and return a reader of it from its first event.
        `sender` checks who sends (the session, the quotas) and returns their user id; it runs in the same
        thread as the turn's transaction, so a turn begins in one thread hop. Refusals (401, 403, 404,
        409, 422, 429) are raised here, before the first byte."""
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
        checks = 0

        def stored(n: int) -> list[Frame]:
            with self.db.session() as s:
                return turns.frames_for_reader(s, turn_id, n)

        def interrupt_if_stale() -> None:
            with self.db.session() as s:
                turns.interrupt_if_stale(s, turn_id, self.presence)

        async def fetch(n: int) -> list[Frame]:
            return await anyio.to_thread.run_sync(stored, n)

        async def idle() -> None:
            nonlocal checks
            checks += 1
            if checks % IDLE_CHECKS == 0:  # a turn whose worker is gone goes on here, or gets its end
                if await supervisor.continue_turn(turn_id) is None:
                    await anyio.to_thread.run_sync(interrupt_if_stale)

        with reading("remote"):
            async for frame in follow_stored(fetch, after, poll_seconds=READ_POLL_SECONDS, idle=idle,
                                             closing=lambda: supervisor.closing):
                yield frame

    async def stop(self, user_id: int, conversation_id: int) -> bool:
        return await self.supervisor.stop(user_id, conversation_id)

    def close_readers(self) -> None:
        self.supervisor.close_readers()
