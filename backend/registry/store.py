"""The registry's storage: three plain dicts, filled at import time, validated and frozen at startup."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any


class RegistryError(RuntimeError):
    """A developer mistake in the declarations (duplicate or dangling name). Raised at startup."""


class Registry:
    def __init__(self) -> None:
        self.payloads: dict[str, Any] = {}
        self.tools: dict[str, Any] = {}
        self.pages: dict[str, Any] = {}
        self.frozen = False

    def add(self, kind: str, name: str, item: Any) -> None:
        if self.frozen:
            raise RegistryError(f"cannot register {kind[:-1]} {name!r}: the registry is frozen after startup")
        table: dict[str, Any] = getattr(self, kind)
        if name in table:
            raise RegistryError(f"duplicate {kind[:-1]} name {name!r}")
        table[name] = item

    def validate(self) -> None:
        from backend.registry.pages import page_references

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


REGISTRY = Registry()


def freeze() -> None:
    """Validate the declarations once; after this nothing can be registered."""
    REGISTRY.validate()
    REGISTRY.frozen = True


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
