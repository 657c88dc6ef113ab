"""Requests a local Messages API server can answer (`COLLEAGUE_MODEL_SERVER=local`): Ollama and llama.cpp's
`llama-server` implement a subset of the Messages API, so with it the app keeps patient notes on the
premises (`ANTHROPIC_BASE_URL=http://localhost:11434`) without sending what they lack.

What the app sends that they do not implement (Ollama's compatibility page lists `tool_choice`,
`metadata` and prompt caching as unsupported; llama.cpp's server lists neither `cache_control` nor
`metadata`), and what this transport does instead:

- `cache_control` on system, message and tool blocks: removed (the prompt is the same, only uncached);
- `tool_choice: {"type": "none"}` (a turn told to answer without another tool call): the `tools` are
  left out instead, which a server without `tool_choice` reads the same way; any other `tool_choice`
  is removed (the model then chooses, as with `auto`);
- `metadata`: removed.

Everything else the app sends (model, max_tokens, system as text blocks, messages with text, tool_use
and tool_result blocks, tools, stream) is in both servers' documented subset; `tests/screening_chat/
test_local_server.py` holds the app to it with a strict fake server.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2

DROPPED = ("metadata", "tool_choice")


def subset(body: dict[str, Any]) -> dict[str, Any]:
    """The request as the subset: same prompt, no caching hints, no tool_choice, no metadata."""
    out = _uncached(body)
    choice = out.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "none":
        out.pop("tools", None)
    for key in DROPPED:
        out.pop(key, None)
    return out


def _uncached(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _uncached(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_uncached(v) for v in value]
    return value


class MessagesSubset(httpx2.AsyncBaseTransport):
    """Rewrites each `POST …/v1/messages` body to `subset(body)` before the inner transport sends it."""

    def __init__(self, inner: httpx2.AsyncBaseTransport | None = None) -> None:
        self.inner = inner or httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "POST" and request.url.path.endswith("/v1/messages"):
            body = subset(json.loads(await request.aread()))
            headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() != "content-length"]
            request = httpx2.Request(request.method, request.url, headers=headers,
                                     content=json.dumps(body).encode(), extensions=request.extensions)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()
