"""The registry layer: payload types, tools and pages (spec: "DEFINITIONS" and "CONFIGURATIONS").

Definitions (`PayloadType`, `ToolConfig`) never name pages; `PageConfig` references them by name.
Built-in modules fill the registry at import time (`builtins.load_builtins`), `freeze()` validates it
once at startup, and `resolve()` answers "what is available here" as global ∪ page ∪ tab ∪ subtab.
"""

from backend.registry.pages import ClientAction, PageConfig, Resolved, SubTabConfig, TabConfig
from backend.registry.payloads import PayloadType
from backend.registry.store import (
    REGISTRY,
    RegistryError,
    freeze,
    register_page,
    register_payload_type,
    register_tool,
    resolve,
    swapped,
)
from backend.registry.tools import ToolConfig, ToolContext, ToolProgress, ToolResult

__all__ = [
    "REGISTRY", "ClientAction", "PageConfig", "PayloadType", "RegistryError", "Resolved", "SubTabConfig",
    "TabConfig", "ToolConfig", "ToolContext", "ToolProgress", "ToolResult", "freeze", "register_page",
    "register_payload_type", "register_tool", "resolve", "swapped",
]
