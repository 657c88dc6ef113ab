"""Evaluator requests (AI columns, the criterion harness) answered by the demo's honest heuristics."""

from __future__ import annotations

from backend.demo.brain import DemoRequest, intent
from backend.demo.verdict import demo_reply_text
from backend.demo.wire import Reply


@intent(priority=0)
def evaluate(req: DemoRequest) -> Reply | None:
    if not req.system.startswith("[colleague:"):
        return None
    text = demo_reply_text(req.system, req.turn_text)
    return Reply.text(text) if text is not None else None
