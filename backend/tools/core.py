"""Tools of the chat core: the holding pen (`get_staged_items`)."""

from __future__ import annotations

import json
from typing import Any

from backend.registry import ToolConfig, ToolContext, register_tool

MAX_STAGED_RETURN = 100


def get_staged_items(params: dict[str, Any], ctx: ToolContext) -> str:
    """Read items the page sent that were kept out of the prompt: by ids, by range, or by a field filter."""
    kind = params["kind"]
    items = ctx.staged.get(kind)
    if items is None:
        available = ", ".join(f"{k} ({len(v)})" for k, v in ctx.staged.items()) or "nothing"
        return f"No staged {kind!r} in this turn. Staged: {available}."
    selected = items
    if ids := params.get("ids"):
        wanted = {str(i) for i in ids}
        selected = [i for i in selected if str(i.get("nct_id") or i.get("pmid") or i.get("id")) in wanted]
    if field := params.get("field"):
        needle = str(params.get("contains", "")).lower()
        selected = [i for i in selected if needle in str(i.get(field, "")).lower()]
    start = int(params.get("start", 0))
    end = int(params.get("end", start + MAX_STAGED_RETURN))
    window = selected[start:min(end, start + MAX_STAGED_RETURN)]
    header = (f"{len(selected)} of {len(items)} staged {kind} match; showing items {start}–"
              f"{start + len(window) - 1 if window else start} (at most {MAX_STAGED_RETURN} per call).")
    return header + "\n" + "\n".join(json.dumps(i, ensure_ascii=False) for i in window)


register_tool(ToolConfig(
    name="get_staged_items",
    description=("Read the items the user has loaded on the page that were not all listed in the page "
                 "context (the holding pen). Select by ids, by index range, or by a field that contains "
                 "a value. Returns JSON lines."),
    input_schema={"type": "object", "required": ["kind"], "properties": {
        "kind": {"type": "string", "description": "Which list, e.g. 'trials' or 'articles'"},
        "ids": {"type": "array", "items": {"type": "string"}, "description": "NCT ids or PMIDs"},
        "start": {"type": "integer", "minimum": 0},
        "end": {"type": "integer", "minimum": 0},
        "field": {"type": "string", "description": "Field to filter on, e.g. 'phase'"},
        "contains": {"type": "string", "description": "Case-insensitive text the field must contain"}}},
    executor=get_staged_items,
    is_global=False,
    category="page",
))
