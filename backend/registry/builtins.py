"""The one explicit list of modules that declare built-in payload types, tools and pages."""

from __future__ import annotations

import importlib

from backend.registry.store import REGISTRY, freeze

BUILTIN_MODULES: tuple[str, ...] = (
    "backend.payloads.core",
    "backend.payloads.research",
    "backend.payloads.charts",
    "backend.tools.core",
    "backend.tools.pubmed",
    "backend.tools.trials",
    "backend.tools.stats",
    "backend.screening.cards",
    "backend.tools.screening",
    "backend.pages.edit_research_stream",
    "backend.pages.tablizer",
    "backend.pages.trialscout",
)


def load_builtins() -> None:
    """Import every declaration module (idempotent: Python imports each once), then validate and freeze."""
    for module in BUILTIN_MODULES:
        importlib.import_module(module)
    if not REGISTRY.frozen:
        freeze()
