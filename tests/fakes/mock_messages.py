"""The real `anthropic` SDK over an in-process fake of the Messages API (an `httpx2.MockTransport`
handler), for tests that call the model without streaming: the evaluator and the eval harness. The SDK
builds, sends and parses every byte as it would against the API.

`demo` answers with the app's own demo model (`backend.demo`), so a run is the product's path;
`scripted` answers every request with one text; `api_error` is a response in the API's error shape.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anthropic
import httpx2
import pytest

from backend.demo.transport import DemoTransport

Handler = Callable[[httpx2.Request], httpx2.Response | Awaitable[httpx2.Response]]


async def demo(request: httpx2.Request) -> httpx2.Response:
    """The demo model's reply, as the app's client would get it."""
    return await DemoTransport(delay=0).handle_async_request(request)


def reply(text: str, *, stop_reason: str = "end_turn", input_tokens: int = 100,
          output_tokens: int = 20) -> httpx2.Response:
    """A Messages API response (non-streaming) with one text block."""
    return httpx2.Response(200, json={
        "id": "msg_test", "type": "message", "role": "assistant", "model": "test-model",
        "content": [{"type": "text", "text": text}], "stop_reason": stop_reason, "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens}})


def api_error(status: int, error_type: str, message: str = "upstream says no",
              error_code: str | None = None) -> httpx2.Response:
    """An error response in the API's shape (`error.details.error_code` when given)."""
    error: dict[str, Any] = {"type": error_type, "message": message}
    if error_code is not None:
        error["details"] = {"error_code": error_code}
    return httpx2.Response(status, headers={"request-id": "req_test"}, json={"type": "error", "error": error})


def scripted(text: str, seen: list[dict[str, Any]] | None = None, **kwargs: Any) -> Handler:
    """A handler answering every request with `text`, recording each request body in `seen`."""

    def handle(request: httpx2.Request) -> httpx2.Response:
        if seen is not None:
            seen.append(json.loads(request.content))
        return reply(text, **kwargs)

    return handle


def sdk_client(handler: Handler) -> anthropic.AsyncAnthropic:
    transport = httpx2.MockTransport(handler)
    return anthropic.AsyncAnthropic(api_key="test", base_url="http://model.invalid", max_retries=0,
                                    http_client=httpx2.AsyncClient(transport=transport))


@pytest.fixture
async def make_client() -> AsyncIterator[Callable[..., anthropic.AsyncAnthropic]]:
    """make_client(handler=demo) → the real SDK over a MockTransport; closed after the test."""
    clients: list[anthropic.AsyncAnthropic] = []

    def make(handler: Handler = demo) -> anthropic.AsyncAnthropic:
        client = sdk_client(handler)
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.close()
