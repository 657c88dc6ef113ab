"""A test page with tools of every shape (fixture `test_registry` registers it over the built-ins)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import BaseModel, Field
from starlette.testclient import TestClient

from backend.registry import (
    REGISTRY,
    ClientAction,
    PageConfig,
    PayloadType,
    TabConfig,
    ToolConfig,
    ToolContext,
    ToolProgress,
    ToolResult,
    swapped,
)
from backend.registry.builtins import load_builtins
from tests.sse import Event, parse


class TestCardData(BaseModel):
    title: str = Field(examples=["..."])


class LookupResults(BaseModel):
    q: str
    items: list[int]


CARD = PayloadType(name="test_card", description="a card for tests", source="llm", model=TestCardData,
                   parse_marker="TEST_CARD:", when="offer it like this:")
RESULTS = PayloadType(name="lookup_results", description="results", source="tool", model=LookupResults)


class LookupInput(BaseModel):
    q: str


class NoInput(BaseModel):
    pass


async def lookup(params: LookupInput, ctx: ToolContext) -> Any:
    yield ToolProgress(stage="searching", message="Searching…", progress=0.3)
    await asyncio.sleep(0)
    yield ToolProgress(stage="ranking", message="Ranking…", progress=0.9)
    yield ToolResult(text=f"Found 2 items for {params.q}.",
                     payload={"type": "lookup_results", "data": {"q": params.q, "items": [1, 2]}})


async def boom(params: NoInput, ctx: ToolContext) -> str:
    raise RuntimeError("the index is offline")


async def huge(params: NoInput, ctx: ToolContext) -> str:
    return "x" * 100_000


async def slow(params: NoInput, ctx: ToolContext) -> str:
    await asyncio.sleep(0.3)  # a remote API taking its time
    return "slow result"


async def secret(params: NoInput, ctx: ToolContext) -> str:
    return "should never run on the test page"


TOOLS = [
    ToolConfig(name="lookup", description="look things up", executor=lookup, is_global=False,
               payload_type="lookup_results", input_model=LookupInput),
    ToolConfig(name="boom", description="always fails", executor=boom, is_global=False, input_model=NoInput),
    ToolConfig(name="huge", description="returns a lot", executor=huge, is_global=False, input_model=NoInput),
    ToolConfig(name="slow", description="takes a while", executor=slow, is_global=False, input_model=NoInput),
    ToolConfig(name="secret_tool", description="only on another page", executor=secret, is_global=False,
               input_model=NoInput),
]

PAGE = PageConfig(
    page="test_page", app="tablizer",
    context_builder=lambda ctx: f"Test page. Query: {ctx.get('query', '')}",
    payloads=("test_card",), tools=("lookup", "boom", "huge", "slow", "get_staged_items"),
    tabs={"extra": TabConfig(tools=("secret_tool",))}, staged_keys=("items",),
    client_actions=(ClientAction("open_trial", "Open a trial's detail view", data=("nct_id",)),),
)
CONTEXT = {"current_page": "test_page", "query": "egfr"}


@contextmanager
def fake_page_registered() -> Iterator[None]:
    load_builtins()
    with swapped(payloads={**REGISTRY.payloads, "test_card": CARD, "lookup_results": RESULTS},
                 tools={**REGISTRY.tools, **{t.name: t for t in TOOLS}},
                 pages={**REGISTRY.pages, "test_page": PAGE}):
        yield


def chat(client: TestClient, message: str, context: dict[str, Any] | None = None,
         conversation_id: int | None = None, status: int = 200) -> list[Event]:
    body: dict[str, Any] = {"message": message, "context": context if context is not None else CONTEXT}
    if conversation_id is not None:
        body["conversation_id"] = conversation_id
    r = client.post("/api/chat/stream", json=body)
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("text/event-stream")
    assert r.headers["cache-control"] == "no-cache"
    assert r.headers["x-accel-buffering"] == "no"
    events = parse(r.text)
    assert [e.id for e in events] == [str(i) for i in range(1, len(events) + 1)]
    assert all(e.data["type"] == e.event for e in events)
    return events


def page_context_of(request: dict[str, Any]) -> str:
    """The page context a request carried: the `<page_context>` block of its latest user message."""
    for message in reversed(request["messages"]):
        if message["role"] == "user" and not any(b.get("type") == "tool_result" for b in message["content"]):
            return next(b["text"] for b in message["content"] if b["text"].startswith("<page_context"))
    raise AssertionError("no user message with a page context")
