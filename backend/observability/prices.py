"""Estimated cost of tokens: list prices per million tokens, by model id prefix.

Estimates, not invoices: the prices are Anthropic's published list prices (USD per million tokens, cache
writes at the 5-minute rate) and change; a deployment with other prices sets `COLLEAGUE_MODEL_PRICES`
(JSON, `{"model-id-prefix": [input, output, cache_read, cache_write]}`), which is merged over these.
A model no entry matches (the demo model) costs 0.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cache_read: float
    cache_write: float

    def cost(self, usage: Mapping[str, int]) -> float:
        return (usage.get("input_tokens", 0) * self.input + usage.get("output_tokens", 0) * self.output
                + usage.get("cache_read_input_tokens", 0) * self.cache_read
                + usage.get("cache_creation_input_tokens", 0) * self.cache_write) / 1_000_000


LIST_PRICES: dict[str, Price] = {
    "claude-opus-4": Price(5.0, 25.0, 0.50, 6.25),
    "claude-sonnet-4": Price(3.0, 15.0, 0.30, 3.75),
    "claude-haiku-4": Price(1.0, 5.0, 0.10, 1.25),
}
FREE = Price(0.0, 0.0, 0.0, 0.0)


@lru_cache(maxsize=8)
def price_table(overrides: str | None) -> dict[str, Price]:
    """The list prices with the setting's JSON merged over them (a bad setting is a startup error)."""
    table = dict(LIST_PRICES)
    for prefix, values in (json.loads(overrides) if overrides else {}).items():
        table[prefix] = Price(*(float(v) for v in values))
    return table


@lru_cache(maxsize=64)
def price_for(model: str, overrides: str | None = None) -> Price:
    """The longest matching prefix wins, so one model's entry can refine its family's."""
    table = price_table(overrides)
    matches = [prefix for prefix in table if model.startswith(prefix)]
    return table[max(matches, key=len)] if matches else FREE
