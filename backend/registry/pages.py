"""PageConfig, its tabs and subtabs, and `Resolved`: what one page/tab/subtab makes available."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from backend.registry.payloads import PayloadType
from backend.registry.tools import ToolConfig

ContextBuilder = Callable[[Mapping[str, Any]], str]


@dataclass(frozen=True)
class SubTabConfig:
    payloads: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()


@dataclass(frozen=True)
class TabConfig:
    payloads: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    subtabs: Mapping[str, SubTabConfig] = field(default_factory=dict)


@dataclass(frozen=True)
class ClientAction:
    """Something the page itself does when the user clicks a suggested action with handler "client".
    The page's frontend implements exactly the actions its config declares (a test holds both sides to
    the same list, read from `GET /api/pages`); `data` names the keys of the action's `data` it reads."""

    action: str
    description: str
    data: tuple[str, ...] = ()


@dataclass(frozen=True)
class PageConfig:
    page: str
    context_builder: ContextBuilder
    app: str = "kh"
    payloads: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    tabs: Mapping[str, TabConfig] = field(default_factory=dict)
    client_actions: tuple[ClientAction, ...] = ()
    # Context keys holding item lists that go to the holding pen when they are long (e.g. "trials").
    staged_keys: tuple[str, ...] = ()
    # What an empty chat tray offers to send on this page (GET /api/pages), so a new user sees what to ask.
    starter_prompts: tuple[str, ...] = ()
    # Tools offered only while the page context holds a value under a key (TrialScout's screening tools
    # while `screening` names a loaded patient): a tool that could only answer "load a patient first" costs
    # prompt tokens and invites a wasted call.
    context_tools: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def page_references(page: PageConfig) -> Iterator[tuple[str, str, str]]:
    """Every (where, kind, name) a page refers to, for validation."""
    for name in page.payloads:
        yield "page", "payloads", name
    for name in page.tools:
        yield "page", "tools", name
    for key, names in page.context_tools.items():
        for name in names:
            yield f"context {key}", "tools", name
    for tab_name, tab in page.tabs.items():
        for name in tab.payloads:
            yield f"tab {tab_name}", "payloads", name
        for name in tab.tools:
            yield f"tab {tab_name}", "tools", name
        for sub_name, sub in tab.subtabs.items():
            for name in sub.payloads:
                yield f"tab {tab_name} / subtab {sub_name}", "payloads", name
            for name in sub.tools:
                yield f"tab {tab_name} / subtab {sub_name}", "tools", name


@dataclass(frozen=True)
class Resolved:
    page: PageConfig | None
    tools: tuple[ToolConfig, ...]
    payloads: tuple[PayloadType, ...]

    @property
    def tool_names(self) -> list[str]:
        return [t.name for t in self.tools]

    @property
    def payload_names(self) -> list[str]:
        return [p.name for p in self.payloads]

    @property
    def llm_payloads(self) -> tuple[PayloadType, ...]:
        return tuple(p for p in self.payloads if p.source == "llm")
