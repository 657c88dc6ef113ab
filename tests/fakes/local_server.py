"""The Messages API subset a local model server implements (Ollama's `/v1/messages` and llama.cpp's
`llama-server`, as their documentation lists it): the fields and content blocks both accept. A request
with anything else is what such a server would refuse or silently mishandle."""

from __future__ import annotations

from typing import Any

TOP_LEVEL = {"model", "max_tokens", "messages", "system", "stream", "temperature", "top_p", "top_k",
             "stop_sequences", "tools"}
BLOCKS = {"text": {"type", "text"}, "tool_use": {"type", "id", "name", "input"},
          "tool_result": {"type", "tool_use_id", "content", "is_error"}}
TOOL_KEYS = {"name", "description", "input_schema"}


def _blocks(where: str, blocks: Any, allowed: dict[str, set[str]]) -> list[str]:
    if isinstance(blocks, str):
        return []
    problems = []
    for i, block in enumerate(blocks or []):
        keys = allowed.get(block.get("type"))
        if keys is None:
            problems.append(f"{where}.{i}: block type {block.get('type')!r} is not supported")
        elif extra := set(block) - keys:
            problems.append(f"{where}.{i}: {sorted(extra)} not supported")
        if block.get("type") == "tool_result":
            problems += _blocks(f"{where}.{i}.content", block.get("content"), {"text": BLOCKS["text"]})
    return problems


def local_subset_problems(body: dict[str, Any]) -> list[str]:
    problems = [f"{key!r} is not supported" for key in sorted(set(body) - TOP_LEVEL)]
    problems += _blocks("system", body.get("system"), {"text": BLOCKS["text"]})
    for i, message in enumerate(body.get("messages") or []):
        problems += _blocks(f"messages.{i}.content", message.get("content"), BLOCKS)
    for i, tool in enumerate(body.get("tools") or []):
        if extra := set(tool) - TOOL_KEYS:
            problems.append(f"tools.{i}: {sorted(extra)} not supported")
    return problems
