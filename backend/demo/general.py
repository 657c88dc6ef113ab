"""General intents of the demo model: summarising tool results, greetings, and an honest fallback."""

from __future__ import annotations

import json
import re

from backend.demo.brain import DemoRequest, intent, marker_json
from backend.demo.wire import Reply

_LOADED_ROWS = re.compile(r"^LOADED (?:TRIALS|ARTICLES)\b(?!: none loaded)", re.M)


def has_rows(page_context: str) -> bool:
    """The context lists loaded rows: its LOADED section's own line (another section may say "none loaded")."""
    return bool(_LOADED_ROWS.search(page_context))

DEFAULT_SUGGESTIONS = [
    {"label": "What can you do?", "value": "What can you help me with on this page?"},
]


def stream_note(req: DemoRequest) -> str:
    """The demo cannot follow a stream's instructions the way Claude would; it says they are active."""
    active = req.stream_instructions
    if not active:
        return ""
    name, instructions = active
    first = next((line.strip(" -") for line in instructions.splitlines() if line.strip(" -")), "")
    return f"\n\n_Working in the research stream “{name}”; its instructions are active (e.g. “{first[:160]}”)._"


TRIALSCOUT_SUGGESTIONS = [
    {"label": "Phase 3 NSCLC immunotherapy", "value": "Find Phase 3 immunotherapy trials for NSCLC"},
    {"label": "Most common phase?", "value": "What's the most common phase among these?"},
    {"label": "Primary endpoint column", "value": "Add a column for the primary endpoint"},
]
TABLIZER_SUGGESTIONS = [
    {"label": "EGFR resistance query", "value": "Find EGFR resistance articles"},
    {"label": "Most common year?", "value": "What's the most common year among these?"},
    {"label": "Resistance column", "value": "Add a column that flags articles about drug resistance"},
]
LOADED_SUGGESTIONS = {
    "trialscout": [
        {"label": "Summarise these", "value": "Summarise the loaded trials"},
        {"label": "Most common phase?", "value": "What's the most common phase among these?"},
        {"label": "Broaden the search", "value": "Broaden my search"},
        {"label": "Randomized? column", "value": "Add a column that says whether each trial is randomized"},
    ],
    "tablizer": [
        {"label": "Summarise these", "value": "Summarise the loaded articles"},
        {"label": "Top journals?", "value": "Which journals appear most among these?"},
        {"label": "Only RCTs", "value": "Narrow the query to randomized controlled trials"},
        {"label": "Randomized? column", "value": "Add a column that says whether each article is a randomized trial"},
    ],
}


def page_suggestions(req: DemoRequest) -> str:
    """Chips that work on this page as it is: about the loaded rows when there are some, else starters."""
    if req.page in LOADED_SUGGESTIONS and has_rows(req.page_context):
        return suggestions(LOADED_SUGGESTIONS[req.page])
    if req.page == "trialscout":
        return suggestions(TRIALSCOUT_SUGGESTIONS)
    if req.page == "tablizer":
        return suggestions(TABLIZER_SUGGESTIONS)
    return suggestions()


def suggestions(values: list[dict[str, str]] | None = None) -> str:
    return "\n\n" + marker_json("SUGGESTED_VALUES:", values or DEFAULT_SUGGESTIONS)


@intent(priority=900)
def summarise_tool_results(req: DemoRequest) -> Reply | None:
    """After tools ran: report what they returned (page modules register richer summaries first)."""
    results = req.tool_results
    if not results:
        return None
    parts = []
    for name, _input, text, is_error in results:
        if is_error:
            parts.append(f"The {name.replace('_', ' ')} tool reported a problem: {text}")
        else:
            excerpt = text if len(text) <= 800 else text[:800] + "…"
            parts.append(f"Here is what {name.replace('_', ' ')} returned:\n\n{excerpt}")
    return Reply.text("\n\n".join(parts))


@intent(priority=950)
def greeting(req: DemoRequest) -> Reply | None:
    text = req.user_text.strip().lower().rstrip("!.?")
    if text not in {"hi", "hello", "hey", "help", "what can you do",
                    "what can you help me with on this page"}:
        return None
    where = f" on the {req.page} page" if req.page else ""
    tools = ", ".join(f"`{name}`" for name in req.tools) or "no tools"
    return Reply.text(
        f"Hello! I'm the demo model standing in for Claude{where}. I can see what the page shows me, "
        f"call the tools offered here ({tools}) and suggest cards you can accept or dismiss."
        + stream_note(req) + suggestions())


@intent(priority=1000)
def fallback(req: DemoRequest) -> Reply:
    asked = req.user_text.strip()
    quoted = json.dumps(asked[:200], ensure_ascii=False)
    return Reply.text(
        f"I'm the demo model, a deterministic stand-in for Claude, and I don't have a prepared answer "
        f"for {quoted}. With an Anthropic API key configured, Claude answers this directly."
        + stream_note(req) + suggestions())
