"""Fixtures for the eval tests: the annotation file, and the real `anthropic` SDK over a fake
Messages API (an `httpx2.MockTransport` handler), so every reply is parsed by the SDK itself."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import anthropic
import httpx2
import pytest

from backend.eval.dataset import CriterionAnnotation, load_annotations
from backend.eval.demo_fake import make_fake_client

Handler = Callable[[httpx2.Request], Any]


@pytest.fixture(scope="session")
def annotations() -> list[CriterionAnnotation]:
    return load_annotations()


@pytest.fixture
async def make_client() -> AsyncIterator[Callable[..., anthropic.AsyncAnthropic]]:
    """make_client(handler=None) → the real SDK over a MockTransport (default: the demo heuristics)."""
    clients: list[anthropic.AsyncAnthropic] = []

    def make(handler: Handler | None = None) -> anthropic.AsyncAnthropic:
        client = make_fake_client(handler)
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.close()


def reply(text: str, *, stop_reason: str = "end_turn", input_tokens: int = 100,
          output_tokens: int = 20) -> httpx2.Response:
    """A Messages API response (non-streaming) with one text block."""
    return httpx2.Response(200, json={
        "id": "msg_test", "type": "message", "role": "assistant", "model": "test-model",
        "content": [{"type": "text", "text": text}], "stop_reason": stop_reason, "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens}})


def scripted(text: str, seen: list[dict[str, Any]] | None = None, **kwargs: Any) -> Handler:
    """A handler answering every request with `text`, recording each request body in `seen`."""

    def handle(request: httpx2.Request) -> httpx2.Response:
        if seen is not None:
            seen.append(json.loads(request.content))
        return reply(text, **kwargs)

    return handle
