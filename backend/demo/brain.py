"""The demo model's brain: a deterministic reading of a Messages API request, answered by intents.

It sees exactly what Claude would (system prompt, messages, tools) and nothing else, so the demo shows
the real product path. Intents are tried in order; the first that answers wins. Modules listed in
`INTENT_MODULES` add theirs with `@intent`. Every answer is honest: it only states what the request
itself carries (tool results, listed items), never invented trials or articles.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from backend.demo.wire import Reply

# The modules whose `@intent`s answer page requests; add a module here to teach the demo a new kind of answer.
INTENT_MODULES: tuple[str, ...] = (
    "backend.demo.screening",  # screening: INGEST, PRESCREEN, trial criteria against a note
    "backend.demo.screening_answers",  # TrialScout's patient: verdicts explained from the stored results
    "backend.demo.stream_editor",  # the stream editor: chat instructions, their review, a definition check
    "backend.demo.product",  # questions about the page itself: what its cards, columns, filters and tools do
    "backend.demo.screen",  # filters on screen, table filters, exclusion columns, guided workflows
    "backend.demo.evaluation",  # AI column / criterion evaluator requests
    "backend.demo.research",  # look-ups, answers after tool results, the page's help
    "backend.demo.rows",  # questions about the loaded rows, summaries
    "backend.demo.columns",  # AI column cards
    "backend.demo.searches",  # trial searches and PubMed queries: new, refined, broadened, after 0 results
    "backend.demo.general",  # greetings and the honest fallback
    "backend.demo.charts",  # "show me the phase breakdown": read the figures, propose a chart
)


@dataclass
class DemoRequest:
    system: str
    messages: list[dict[str, Any]]
    tools: dict[str, dict[str, Any]]
    tool_choice: str = "auto"
    raw: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> DemoRequest:
        system = body.get("system") or ""
        if isinstance(system, list):
            system = "\n\n".join(b.get("text", "") for b in system)
        tools = {t["name"]: t for t in body.get("tools") or [] if "name" in t}
        choice = (body.get("tool_choice") or {}).get("type", "auto")
        return cls(system=system, messages=body.get("messages") or [], tools=tools, tool_choice=choice,
                   raw=body)

    @property
    def can_call_tools(self) -> bool:
        return bool(self.tools) and self.tool_choice != "none"

    def offers_tool(self, name: str) -> bool:
        return self.can_call_tools and name in self.tools

    def offers_marker(self, marker: str) -> bool:
        return f"{marker}" in self.system

    @property
    def user_text(self) -> str:
        """The latest thing the user typed (skipping tool-result messages)."""
        for msg in reversed(self.messages):
            if msg.get("role") != "user":
                continue
            content = msg.get("content")
            if isinstance(content, str):
                return content
            texts = [b.get("text", "") for b in content if b.get("type") == "text"]
            if texts and not any(b.get("type") == "tool_result" for b in content):
                return texts[-1]
        return ""

    @property
    def tool_results(self) -> list[tuple[str, dict[str, Any], str, bool]]:
        """(tool name, input, result text, is_error) for the tool results of the latest user message,
        or [] when the latest user message is not tool results."""
        if not self.messages or self.messages[-1].get("role") != "user":
            return []
        content = self.messages[-1].get("content")
        if isinstance(content, str):
            return []
        uses: dict[str, dict[str, Any]] = {}
        if len(self.messages) >= 2:
            for block in self.messages[-2].get("content") or ():
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    uses[block["id"]] = block
        out = []
        for block in content or ():
            if block.get("type") != "tool_result":
                continue
            use = uses.get(block["tool_use_id"], {})
            text = block.get("content")
            if isinstance(text, list):
                text = "\n".join(b.get("text", "") for b in text if b.get("type") == "text")
            out.append((use.get("name", "?"), use.get("input", {}), text or "", bool(block.get("is_error"))))
        return out

    def tool_calls_this_turn(self) -> list[str]:
        """Names of tools already called since the user's latest typed message."""
        names: list[str] = []
        for msg in reversed(self.messages):
            content = msg.get("content")
            if msg.get("role") == "user" and (isinstance(content, str) or not any(
                    b.get("type") == "tool_result" for b in content)):
                break
            if msg.get("role") == "assistant" and isinstance(content, list):
                names += [b["name"] for b in content if b.get("type") == "tool_use"]
        return names

    @property
    def turn_text(self) -> str:
        """Everything the latest user message says (the page context of the turn opens it)."""
        for msg in reversed(self.messages):
            content = msg.get("content")
            if msg.get("role") != "user":
                continue
            if isinstance(content, str):
                return content
            if not any(b.get("type") == "tool_result" for b in content):
                return "\n\n".join(b.get("text", "") for b in content if b.get("type") == "text")
        return ""

    @property
    def page_context(self) -> str:
        match = re.search(r"<page_context[^>]*>(.*?)</page_context>", self.turn_text, re.S)
        return match.group(1) if match else ""

    @property
    def stream_instructions(self) -> tuple[str, str] | None:
        """(stream name, instructions) when the turn runs inside a research stream."""
        match = re.search(r'## Instructions for the research stream "([^"]*)"\n(.*?)(?:\n## |$)',
                          self.system, re.S)
        return (match.group(1), match.group(2).strip()) if match else None

    @property
    def page(self) -> str | None:
        match = re.search(r'<page_context page="([^"]*)"', self.turn_text)
        return match.group(1) if match else None


Intent = Callable[[DemoRequest], Reply | None]
_INTENTS: list[tuple[int, Intent]] = []


def intent(priority: int = 100) -> Callable[[Intent], Intent]:
    """Register an intent; lower priority numbers are tried first."""
    def deco(fn: Intent) -> Intent:
        _INTENTS.append((priority, fn))
        _INTENTS.sort(key=lambda pair: pair[0])
        return fn
    return deco


def _load() -> None:
    for module in INTENT_MODULES:
        importlib.import_module(module)


def answer(body: dict[str, Any]) -> Reply:
    _load()
    request = DemoRequest.from_body(body)
    for _, fn in _INTENTS:
        reply = fn(request)
        if reply is not None:
            break
    else:  # general.py always answers; this guards a broken intent list
        reply = Reply.text("I'm the demo model and I have no answer for that.")
    reply.input_tokens = reply.input_tokens or _estimate_tokens(body)
    reply.output_tokens = reply.output_tokens or max(1, sum(
        len(b.get("text", "")) + len(json.dumps(b.get("input", ""))) for b in reply.blocks) // 4)
    return reply


def _estimate_tokens(body: dict[str, Any]) -> int:
    return max(1, len(json.dumps(body, ensure_ascii=False)) // 4)


def marker_json(marker: str, data: dict[str, Any] | list[Any]) -> str:
    return f"{marker} {json.dumps(data, ensure_ascii=False)}"
