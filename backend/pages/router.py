from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from backend.deps import CurrentUser
from backend.errors import error_responses
from backend.registry import REGISTRY, resolve

router = APIRouter(prefix="/api", tags=["pages"], responses=error_responses(401))


def _entry(page: str, tab: str | None = None, subtab: str | None = None) -> dict[str, Any]:
    resolved = resolve(page, tab, subtab)
    return {"tools": resolved.tool_names, "payloads": resolved.payload_names}


@router.get("/pages")
async def pages(user: CurrentUser) -> dict[str, Any]:
    """The frozen page registry with the resolved tool and payload names at every level."""
    out: dict[str, Any] = {}
    for name, page in REGISTRY.pages.items():
        out[name] = {
            "app": page.app, **_entry(name),
            "starter_prompts": list(page.starter_prompts),
            "client_actions": [{"action": a.action, "description": a.description} for a in page.client_actions],
            "tabs": {
                tab_name: {**_entry(name, tab_name), "subtabs": {
                    sub: _entry(name, tab_name, sub) for sub in tab.subtabs}}
                for tab_name, tab in page.tabs.items()},
        }
    return {"pages": out, "global": _entry("__none__"),
            "payload_types": {p.name: {"source": p.source, "is_global": p.is_global,
                                       "description": p.description} for p in REGISTRY.payloads.values()}}
