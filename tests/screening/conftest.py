"""The screening engine's tests talk to the demo model through the real SDK, offline."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2
import pytest

from backend.demo.transport import DemoTransport


@pytest.fixture
async def demo_client() -> Any:
    client = anthropic.AsyncAnthropic(api_key="demo", max_retries=0,
                                      http_client=httpx2.AsyncClient(transport=DemoTransport(delay=0)))
    yield client
    await client.close()
