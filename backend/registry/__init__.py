"""The registry layer: payload types, tools and pages (spec: "DEFINITIONS" and "CONFIGURATIONS").

Definitions (`PayloadType`, `ToolConfig`) never name pages; `PageConfig` references them by name.
Payload types are declared by decorating their model (`@payload_type`), tools by decorating their
executor (`@tool`). Built-in modules fill the registry at import time (`builtins.load_builtins`),
`freeze()` validates it once at startup, and `resolve()` answers "what is available here" as
global ∪ page ∪ tab ∪ subtab.
"""

from backend.registry.pages import ClientAction, PageConfig, Resolved, SubTabConfig, TabConfig
from backend.registry.payloads import Omitted, PayloadType, card_of
from backend.registry.store import (
    REGISTRY,
    RegistryError,
    freeze,
    payload_type,
    register_page,
    register_payload_type,
    register_tool,
    resolve,
    swapped,
    tool,
)
from backend.registry.tools import ToolConfig, ToolContext, ToolProgress, ToolResult

__all__ = [
    "REGISTRY", "ClientAction", "Omitted", "PageConfig", "PayloadType", "RegistryError", "Resolved",
    "SubTabConfig", "TabConfig", "ToolConfig", "ToolContext", "ToolProgress", "ToolResult", "card_of", "freeze",
    "payload_type", "register_page", "register_payload_type", "register_tool", "resolve", "swapped", "tool",
]
