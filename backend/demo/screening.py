"""Screening requests (INGEST, PRESCREEN, per-trial judgement, and trial criteria sent to the criterion
evaluator) answered from the note's text by `backend.screening.demo`."""

from __future__ import annotations

from backend.demo.brain import DemoRequest, intent
from backend.demo.wire import Reply
from backend.screening.demo import demo_reply


@intent(priority=-1)
def screening(req: DemoRequest) -> Reply | None:
    if not req.system.startswith("[colleague:"):
        return None
    found = demo_reply(req.raw)
    if found is None:
        return None
    kind, value = found
    return Reply.tool("search_trials", value) if kind == "tool" else Reply.text(value)
