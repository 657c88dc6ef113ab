"""The one place that builds the `anthropic` client: Claude with a key, a local model without (the demo
model, which the composition root hands in: `backend.main.create_app`)."""

from __future__ import annotations

import asyncio
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

import anthropic
import httpx2

from backend.agent.local_server import MessagesSubset
from backend.config import Settings

CONTEXT_WINDOW = 200_000  # tokens, for every model offered (Opus, Sonnet and Haiku 4.x)


@dataclass(frozen=True)
class ModelChoice:
    """A model a conversation may use: its API id, what the tray calls it, how much it can read."""

    id: str
    label: str
    context_window: int = CONTEXT_WINDOW


def model_label(model_id: str) -> str:
    """"claude-opus-4-6" → "Opus 4.6"; an id of another shape stays as it is."""
    found = re.fullmatch(r"claude-([a-z]+)-(\d+)-(\d+)(?:-\d{8})?", model_id)
    return f"{found[1].capitalize()} {found[2]}.{found[3]}" if found else model_id


@dataclass(frozen=True)
class LLM:
    """The model conversations talk to. Its SDK client is one per event loop (`client`): a client's
    pooled connections belong to the loop that opened them, and one app may serve several loops (every
    `TestClient` runs its own); each lifespan closes its loop's client at shutdown (`close`)."""

    connect: Callable[[], anthropic.AsyncAnthropic]  # a new client
    model: str  # the default model of a conversation
    mode: str  # "anthropic" | "demo"
    choices: tuple[ModelChoice, ...] = ()
    _clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, anthropic.AsyncAnthropic] = field(
        default_factory=weakref.WeakKeyDictionary, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.choices:
            object.__setattr__(self, "choices", (ModelChoice(self.model, self.label_for(self.model)),))

    @property
    def client(self) -> anthropic.AsyncAnthropic:
        """The running event loop's client, made on first use."""
        loop = asyncio.get_running_loop()
        if (client := self._clients.get(loop)) is None:
            client = self._clients[loop] = self.connect()
        return client

    async def close(self) -> None:
        """Close the running loop's client and its pooled connections."""
        if (client := self._clients.pop(asyncio.get_running_loop(), None)) is not None:
            await client.close()

    @property
    def label(self) -> str:
        return self.label_for(self.model)

    def label_for(self, model: str) -> str:
        return "demo model" if self.mode == "demo" else model

    def choice(self, model: str | None) -> ModelChoice:
        """The offered model with this id; the default one for None or an id no longer offered (a
        conversation set to Opus keeps working after the key is removed: it gets the demo model)."""
        by_id = {c.id: c for c in self.choices}
        return by_id.get(model or self.model) or by_id.get(self.model) or self.choices[0]

    def describe(self) -> dict[str, str]:
        return {"mode": self.mode, "model": self.model, "label": self.label}


@dataclass(frozen=True)
class LocalModel:
    """A model answered inside this process: its id, and the transport that speaks the Messages API
    for it (the demo model's is `backend.demo.transport.DemoTransport`)."""

    id: str
    transport: httpx2.AsyncBaseTransport


def make_llm(settings: Settings, local: LocalModel) -> LLM:
    """Claude when the settings hold an API key, else the local model."""
    if settings.anthropic_api_key:
        # No SDK retries: the chat loop retries what waiting can cure, and only before anything was
        # shown (`loop._call_with_retries`); the SDK would retry a spend-limit 429 as if it were busy.
        key, base_url = settings.anthropic_api_key, settings.anthropic_base_url
        subset = settings.colleague_model_server == "local"

        def claude() -> anthropic.AsyncAnthropic:
            http = anthropic.DefaultAsyncHttpxClient(transport=MessagesSubset()) if subset else None
            return anthropic.AsyncAnthropic(api_key=key, base_url=base_url, max_retries=0, http_client=http)

        ids = [settings.colleague_model, *(m.strip() for m in settings.colleague_models.split(","))]
        choices = tuple(ModelChoice(i, model_label(i)) for i in dict.fromkeys(ids) if i)
        return LLM(connect=claude, model=settings.colleague_model, mode="anthropic", choices=choices)

    def demo() -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(api_key="demo", base_url="http://demo-model.local",
                                        http_client=httpx2.AsyncClient(transport=local.transport), max_retries=0)

    return LLM(connect=demo, model=local.id, mode="demo", choices=(ModelChoice(local.id, "demo model"),))
