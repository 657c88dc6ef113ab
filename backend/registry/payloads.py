"""PayloadType: structured data a card renders, from a tool (`ToolResult.payload`) or the model (a marker)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class PayloadType:
    name: str
    description: str
    source: Literal["tool", "llm"]
    schema: dict[str, Any]
    is_global: bool = False
    # LLM payloads: the model writes `<parse_marker> {json}`; the instructions teach it when and how.
    parse_marker: str | None = None
    llm_instructions: str | None = None
