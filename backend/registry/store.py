"""The registry's storage and resolution: three plain dicts filled at import time, validated and frozen
at startup, and `resolve()` = global ∪ page ∪ tab ∪ subtab, ordered, without duplicates.

The definition modules (`payloads`, `tools`, `pages`) know nothing of the store; the store imports them.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

from pydantic import BaseModel

from backend.registry.pages import PageConfig, Resolved, page_references
from backend.registry.payloads import PAYLOAD_NAMES, PayloadType
from backend.registry.tools import Executor, ToolConfig

M = TypeVar("M", bound=type[BaseModel])
E = TypeVar("E", bound=Executor)


class RegistryError(RuntimeError):
    """A developer mistake in the declarations (duplicate or dangling name). Raised at startup."""


class Registry:
    def __init__(self) -> None:
        self.payloads: dict[str, PayloadType] = {}
        self.tools: dict[str, ToolConfig] = {}
        self.pages: dict[str, PageConfig] = {}
        self.frozen = False

    def add(self, kind: str, name: str, item: Any) -> None:
        if self.frozen:
            raise RegistryError(f"cannot register {kind[:-1]} {name!r}: the registry is frozen after startup")
        table: dict[str, Any] = getattr(self, kind)
        if name in table:
            raise RegistryError(f"duplicate {kind[:-1]} name {name!r}")
        table[name] = item

    def validate(self) -> None:
        for tool in self.tools.values():
            if tool.payload_type and tool.payload_type not in self.payloads:
                raise RegistryError(f"tool {tool.name!r} names unknown payload type {tool.payload_type!r}")
        for payload in self.payloads.values():
            if payload.source == "llm" and not payload.parse_marker:
                raise RegistryError(f"LLM payload type {payload.name!r} has no parse_marker")
        markers = [p.parse_marker for p in self.payloads.values() if p.parse_marker]
        if len(markers) != len(set(markers)):
            raise RegistryError(f"two payload types share a parse_marker: {sorted(markers)}")
        for page in self.pages.values():
            for where, kind, name in page_references(page):
                if name not in getattr(self, kind):
                    raise RegistryError(f"page {page.page!r} ({where}) names unknown {kind[:-1]} {name!r}")
            actions = [a.action for a in page.client_actions]
            if len(actions) != len(set(actions)):
                raise RegistryError(f"page {page.page!r} declares a client action twice: {sorted(actions)}")


REGISTRY = Registry()


def register_payload_type(payload_type: PayloadType) -> PayloadType:
    REGISTRY.add("payloads", payload_type.name, payload_type)
    return payload_type


def register_tool(tool: ToolConfig) -> ToolConfig:
    REGISTRY.add("tools", tool.name, tool)
    return tool


def payload_type(name: str, description: str, *, marker: str | None = None, when: str | None = None,
                 notes: str | None = None, is_global: bool = False, suggestion: bool = False) -> Callable[[M], M]:
    """Declare a payload type by decorating its model. With a `marker` the model writes it (source "llm"),
    without one a tool returns it (source "tool")."""

    def declare(model: M) -> M:
        register_payload_type(PayloadType(
            name=name, description=description, source="llm" if marker else "tool", model=model,
            is_global=is_global, parse_marker=marker, when=when, notes=notes, suggestion=suggestion))
        PAYLOAD_NAMES[model] = name
        return model

    return declare


def tool(*, is_global: bool = True, payload: type[BaseModel] | None = None) -> Callable[[E], E]:
    """Declare a tool by decorating its executor: the function's name is the tool's, its docstring the
    description the model reads, its first parameter's type the input model; `payload` is the model of
    the payload its results carry."""

    def declare(executor: E) -> E:
        hints = typing.get_type_hints(executor)
        first = next(iter(inspect.signature(executor).parameters))
        if executor.__doc__ is None:
            raise RegistryError(f"tool {executor.__name__!r} has no docstring to describe it")
        if payload is not None and payload not in PAYLOAD_NAMES:
            raise RegistryError(f"tool {executor.__name__!r} carries {payload.__name__}, not a declared payload")
        register_tool(ToolConfig(
            name=executor.__name__, description=" ".join(executor.__doc__.split()), input_model=hints[first],
            executor=executor, is_global=is_global, payload_type=PAYLOAD_NAMES[payload] if payload else None))
        return executor

    return declare


def register_page(page: PageConfig) -> PageConfig:
    REGISTRY.add("pages", page.page, page)
    return page


def freeze() -> None:
    """Validate the declarations once; after this nothing can be registered."""
    REGISTRY.validate()
    REGISTRY.frozen = True


def _ordered_unique(*groups: tuple[str, ...] | list[str]) -> list[str]:
    seen: dict[str, None] = {}
    for group in groups:
        for name in group:
            seen.setdefault(name, None)
    return list(seen)


def resolve(page: str | None, tab: str | None = None, subtab: str | None = None,
            context: Mapping[str, Any] | None = None) -> Resolved:
    """An unknown page gets the global set; an unknown tab the page set; an unknown subtab the tab set.
    A page's `context_tools` join (after the page's own) for each key `context` holds a value under."""
    config = REGISTRY.pages.get(page) if page else None
    tool_groups: list[tuple[str, ...] | list[str]] = [[t.name for t in REGISTRY.tools.values() if t.is_global]]
    payload_groups: list[tuple[str, ...] | list[str]] = [
        [p.name for p in REGISTRY.payloads.values() if p.is_global]]
    if config is not None:
        tool_groups.append(config.tools)
        tool_groups += [names for key, names in config.context_tools.items() if context and context.get(key)]
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


@contextmanager
def swapped(
    payloads: Mapping[str, Any] | None = None,
    tools: Mapping[str, Any] | None = None,
    pages: Mapping[str, Any] | None = None,
    validate: bool = True,
) -> Iterator[Registry]:
    """Tests: replace (some of) the registry's contents for the duration of the block, then restore."""
    saved = (dict(REGISTRY.payloads), dict(REGISTRY.tools), dict(REGISTRY.pages), REGISTRY.frozen)
    try:
        for kind, new in (("payloads", payloads), ("tools", tools), ("pages", pages)):
            if new is not None:
                table = getattr(REGISTRY, kind)
                table.clear()
                table.update(new)
        if validate:
            REGISTRY.validate()
        yield REGISTRY
    finally:
        for kind, old in zip(("payloads", "tools", "pages"), saved[:3], strict=True):
            table = getattr(REGISTRY, kind)
            table.clear()
            table.update(old)
        REGISTRY.frozen = saved[3]
