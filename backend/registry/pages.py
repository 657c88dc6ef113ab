"""PageConfig and resolution: available = global ∪ page ∪ tab ∪ subtab, ordered, without duplicates."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from backend.registry.payloads import PayloadType
from backend.registry.store import REGISTRY
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
    action: str
    description: str


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


def register_page(page: PageConfig) -> PageConfig:
    REGISTRY.add("pages", page.page, page)
    return page


def page_references(page: PageConfig) -> Iterator[tuple[str, str, str]]:
    """Every (where, kind, name) a page refers to, for validation."""
    for name in page.payloads:
        yield "page", "payloads", name
    for name in page.tools:
        yield "page", "tools", name
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


def _ordered_unique(*groups: tuple[str, ...] | list[str]) -> list[str]:
    seen: dict[str, None] = {}
    for group in groups:
        for name in group:
            seen.setdefault(name, None)
    return list(seen)


def resolve(page: str | None, tab: str | None = None, subtab: str | None = None) -> Resolved:
    """An unknown page gets the global set; an unknown tab the page set; an unknown subtab the tab set."""
    config = REGISTRY.pages.get(page) if page else None
    tool_groups: list[tuple[str, ...] | list[str]] = [[t.name for t in REGISTRY.tools.values() if t.is_global]]
    payload_groups: list[tuple[str, ...] | list[str]] = [
        [p.name for p in REGISTRY.payloads.values() if p.is_global]]
    if config is not None:
        tool_groups.append(config.tools)
        payload_groups.append(config.payloads)
        tab_config = config.tabs.get(tab) if tab else None
        if tab_config is not None:
            tool_groups.append(tab_config.tools)
            payload_groups.append(tab_config.payloads)
            sub_config = tab_config.subtabs.get(subtab) if subtab else None
            if sub_config is not None:
                tool_groups.append(sub_config.tools)
                payload_groups.append(sub_config.payloads)
    return Resolved(
        page=config,
        tools=tuple(REGISTRY.tools[n] for n in _ordered_unique(*tool_groups)),
        payloads=tuple(REGISTRY.payloads[n] for n in _ordered_unique(*payload_groups)),
    )
