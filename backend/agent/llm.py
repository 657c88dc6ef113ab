"""The one place that builds the `anthropic` client: Claude with a key, the demo model without."""

from __future__ import annotations

from dataclasses import dataclass

import anthropic
import httpx2

from backend.agent.demo.transport import DEMO_MODEL_ID, DemoTransport
from backend.config import Settings


@dataclass(frozen=True)
class LLM:
    client: anthropic.AsyncAnthropic
    model: str
    mode: str  # "anthropic" | "demo"

    @property
    def label(self) -> str:
        return "demo model" if self.mode == "demo" else self.model

    def describe(self) -> dict[str, str]:
        return {"mode": self.mode, "model": self.model, "label": self.label}


def make_llm(settings: Settings) -> LLM:
    if settings.anthropic_api_key:
        # No SDK retries: the chat loop retries what waiting can cure, and only before anything was
        # shown (`loop._call_with_retries`); the SDK would retry a spend-limit 429 as if it were busy.
        client = anthropic.AsyncAnthropic(api_key=settings.anthropic_api_key,
                                          base_url=settings.anthropic_base_url, max_retries=0)
        return LLM(client=client, model=settings.colleague_model, mode="anthropic")
    transport = DemoTransport(delay=settings.demo_delay_ms / 1000)
    client = anthropic.AsyncAnthropic(api_key="demo", base_url="http://demo-model.local",
                                      http_client=httpx2.AsyncClient(transport=transport), max_retries=0)
    return LLM(client=client, model=DEMO_MODEL_ID, mode="demo")

