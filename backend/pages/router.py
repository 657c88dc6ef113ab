"""`GET /api/pages`: the frozen page registry as the frontend reads it (also committed in the OpenAPI
document as `x-page-registry`, so frontend tests can hold each page's cards and client actions to it)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from backend.auth.deps import CurrentUser
from backend.errors import error_responses
from backend.registry import REGISTRY, resolve
from backend.routing import OneHopRoute

router = APIRouter(prefix="/api", tags=["pages"], responses=error_responses(401), route_class=OneHopRoute)


class Level(BaseModel):
    """The resolved tool and payload names at one level (global ∪ page ∪ tab ∪ subtab)."""

    tools: list[str]
    payloads: list[str]


class TabRead(Level):
    subtabs: dict[str, Level]


class ClientActionRead(BaseModel):
    action: str
    description: str
    data: list[str] = Field(description="the keys of the action's `data` the page reads")


class PageRead(Level):
    app: str
    client_actions: list[ClientActionRead]
    starter_prompts: list[str]  # what an empty tray offers on this page
    tabs: dict[str, TabRead]
    context_tools: dict[str, list[str]] = Field(
        description="Tools offered besides `tools` only while the page context holds a value under the key")


class PayloadTypeRead(BaseModel):
    source: Literal["tool", "llm"]
    is_global: bool
    description: str


class PagesRead(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    pages: dict[str, PageRead]
    global_: Level = Field(alias="global")
    payload_types: dict[str, PayloadTypeRead]


def _level(page: str, tab: str | None = None, subtab: str | None = None) -> Level:
    resolved = resolve(page, tab, subtab)
    return Level(tools=resolved.tool_names, payloads=resolved.payload_names)


def page_registry() -> PagesRead:
    """Every page with the resolved names at each level, its client actions, and every payload type."""
    pages = {}
    for name, page in REGISTRY.pages.items():
        top = _level(name)
        pages[name] = PageRead(
            app=page.app, tools=top.tools, payloads=top.payloads, starter_prompts=list(page.starter_prompts),
            context_tools={key: list(names) for key, names in page.context_tools.items()},
            client_actions=[ClientActionRead(action=a.action, description=a.description, data=list(a.data))
                            for a in page.client_actions],
            tabs={tab_name: TabRead(**_level(name, tab_name).model_dump(),
                                    subtabs={sub: _level(name, tab_name, sub) for sub in tab.subtabs})
                  for tab_name, tab in page.tabs.items()})
    return PagesRead(pages=pages, global_=_level("__none__"), payload_types={
        p.name: PayloadTypeRead(source=p.source, is_global=p.is_global, description=p.description)
        for p in REGISTRY.payloads.values()})


@router.get("/pages")
async def pages(user: CurrentUser) -> PagesRead:
    """The frozen page registry with the resolved tool and payload names at every level."""
    return page_registry()
