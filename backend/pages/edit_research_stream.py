"""The research stream editor (app `kh`): tabs semantic / retrieval / execute, and execute's workbench."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from backend.pages._format import short
from backend.pages.budget import budget_chars, clip, fit
from backend.registry import ClientAction, PageConfig, SubTabConfig, TabConfig, register_page


def build_context(context: Mapping[str, Any]) -> str:
    tab = short(context.get("active_tab") or "semantic", 40)
    subtab = short(context.get("active_subtab"), 40)
    stream = context.get("stream")
    stream = stream if isinstance(stream, Mapping) else {}
    lines = [
        "User is editing a research stream.",
        f"- Stream: {short(stream.get('name') or context.get('stream_id'), 120) or 'new stream'}",
        f"- Active tab: {tab}" + (f" / {subtab}" if subtab else ""),
    ]
    section = min(4000, budget_chars() // 5)  # four sections, each clipped with a note
    for key, label in (("current_schema", "CURRENT DEFINITION"), ("retrieval", "RETRIEVAL SETUP"),
                       ("workbench", "WORKBENCH"), ("chat_instructions_draft", "CHAT INSTRUCTIONS DRAFT")):
        value = context.get(key)
        if value:
            text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False, default=str)
            lines.append(f"\n{label}:\n{clip(text, section)}")
    return fit(lines)


register_page(PageConfig(
    page="edit_research_stream",
    app="kh",
    context_builder=build_context,
    payloads=("chat_instructions_suggestion",),
    tabs={
        "semantic": TabConfig(payloads=("schema_proposal", "validation_results")),
        "retrieval": TabConfig(payloads=("retrieval_proposal",)),
        "execute": TabConfig(
            payloads=("query_suggestion",),
            subtabs={"workbench": SubTabConfig(payloads=("filter_suggestion",))},
        ),
    },
    starter_prompts=(
        "Suggest chat instructions for this stream",
        "What would make these instructions clearer?",
        "Check my stream definition for problems",
    ),
    client_actions=(
        ClientAction("switch_tab", "Switch the editor to another tab: semantic (the definition), retrieval (the "
                     "default PubMed query and trial search) or instructions (the chat instructions)",
                     data=("tab",)),
    ),
))
