"""Research streams as the chat sees them: whose instructions join the system prompt."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from backend.db.models import ResearchStream


def stream_for_prompt(s: Session, stream_id: Any) -> tuple[dict[str, Any] | None, list[str]]:
    """The stream whose `chat_instructions` apply to a turn, and notices for the user when the page names
    a stream that cannot be used (unknown or archived): reported, never silently ignored."""
    if stream_id in (None, ""):
        return None, []
    try:
        sid = int(stream_id)
    except (TypeError, ValueError):
        return None, [f"Research stream {stream_id!r} is not a valid id; no stream instructions are applied."]
    stream = s.get(ResearchStream, sid)
    if stream is None:
        return None, [f"Research stream {sid} does not exist; no stream instructions are applied."]
    if stream.archived:
        return None, [f"Research stream \"{stream.name}\" is archived; its instructions are not applied."]
    return {"id": stream.id, "name": stream.name, "chat_instructions": stream.chat_instructions}, []
