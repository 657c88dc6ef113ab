"""Tools of the chat core: the holding pen (`get_staged_items`)."""

from __future__ import annotations

import json

from pydantic import BaseModel, Field

from backend.registry import ToolContext, tool

MAX_STAGED_RETURN = 100


class StagedItemsInput(BaseModel):
    kind: str = Field(max_length=50, description="Which list, e.g. 'trials' or 'articles'")
    ids: list[str] | None = Field(None, max_length=500, description="NCT ids or PMIDs")
    start: int = Field(0, ge=0)
    end: int | None = Field(None, ge=0)
    field: str | None = Field(None, max_length=100, description="Field to filter on, e.g. 'phase'")
    contains: str = Field("", max_length=500, description="Case-insensitive text the field must contain")


@tool(is_global=False)
async def get_staged_items(params: StagedItemsInput, ctx: ToolContext) -> str:
    """Read the items the user has loaded on the page that were not all listed in the page context (the
    holding pen). Select by ids, by index range, or by a field that contains a value. Returns JSON lines."""
    kind = params.kind
    items = ctx.staged.get(kind)
    if items is None:
        available = ", ".join(f"{k} ({len(v)})" for k, v in ctx.staged.items()) or "nothing"
        return f"No staged {kind!r} in this turn. Staged: {available}."
    selected = items
    if params.ids:
        wanted = set(params.ids)
        selected = [i for i in selected if str(i.get("nct_id") or i.get("pmid") or i.get("id")) in wanted]
    if field := params.field:
        needle = params.contains.lower()
        selected = [i for i in selected if needle in str(i.get(field, "")).lower()]
    start = params.start
    end = params.end if params.end is not None else start + MAX_STAGED_RETURN
    window = selected[start:min(end, start + MAX_STAGED_RETURN)]
    header = (f"{len(selected)} of {len(items)} staged {kind} match; showing items {start}–"
              f"{start + len(window) - 1 if window else start} (at most {MAX_STAGED_RETURN} per call).")
    return header + "\n" + "\n".join(json.dumps(i, ensure_ascii=False) for i in window)

