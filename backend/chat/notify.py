"""Wake-ups between instances on PostgreSQL: `NOTIFY` on two channels, sent in the transaction that makes
them true (PostgreSQL delivers a notification at commit, never one of a rolled-back transaction).

- `EVENTS`: turns whose new events this transaction stored (a checkpoint batch, a final save, an
  interrupt): one notification per transaction, however many events it holds.
- `READERS`: turns that have readers on the sending instance; the instance generating one of them writes
  its events out eagerly while the announcement is fresh (`ProgressWriter.watch`).
- `STATES`: turns a draining instance saved `suspended`: an instance with readers of one goes on with it
  at once, not at its next check of the turns' states (`chat/fanout.py` STALE_SECONDS).

A payload is comma-separated turn ids, split under PostgreSQL's 8000-byte limit. Other databases have no
NOTIFY: there, nothing is sent and readers poll (`chat/fanout.py`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sqlalchemy import text
from sqlalchemy.orm import Session

EVENTS = "colleague_turn_events"
READERS = "colleague_turn_readers"
STATES = "colleague_turn_states"
MAX_PAYLOAD = 7900  # bytes; PostgreSQL refuses 8000 and more
_NOTIFY = text("SELECT pg_notify(:channel, :payload)")


def notify(s: Session, channel: str, turn_ids: Iterable[str]) -> None:
    """Tell every listening instance, when this transaction commits, that these turns have news."""
    if s.get_bind().dialect.name != "postgresql":
        return
    for payload in payloads(sorted(set(turn_ids))):
        s.execute(_NOTIFY, {"channel": channel, "payload": payload})


def payloads(turn_ids: list[str]) -> Iterator[str]:
    chunk: list[str] = []
    size = 0
    for turn_id in turn_ids:
        if chunk and size + len(turn_id) + 1 > MAX_PAYLOAD:
            yield ",".join(chunk)
            chunk, size = [], 0
        chunk.append(turn_id)
        size += len(turn_id) + 1
    if chunk:
        yield ",".join(chunk)


def turn_ids(payload: str) -> list[str]:
    return [t for t in payload.split(",") if t]
