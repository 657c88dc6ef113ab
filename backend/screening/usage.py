"""Token usage and estimated cost of the model calls of one screening."""

from __future__ import annotations

import anthropic

from backend.criteria.evaluator import estimate_cost_usd
from backend.screening.models import Usage


def usage_of(message: anthropic.types.Message, model: str) -> Usage:
    """One call's usage; input counts uncached, cache-write and cache-read tokens."""
    u = message.usage
    tokens_in = (u.input_tokens or 0) + (u.cache_creation_input_tokens or 0) + (u.cache_read_input_tokens or 0)
    tokens_out = u.output_tokens or 0
    return Usage(model=model, model_calls=1, input_tokens=tokens_in, output_tokens=tokens_out,
                 cache_read_tokens=u.cache_read_input_tokens or 0,
                 estimated_cost_usd=estimate_cost_usd(model, tokens_in, tokens_out))


def add_usage(a: Usage, b: Usage) -> Usage:
    cost = None if a.estimated_cost_usd is None and b.estimated_cost_usd is None else \
        (a.estimated_cost_usd or 0.0) + (b.estimated_cost_usd or 0.0)
    return Usage(model=b.model or a.model, model_calls=a.model_calls + b.model_calls,
                 input_tokens=a.input_tokens + b.input_tokens, output_tokens=a.output_tokens + b.output_tokens,
                 cache_read_tokens=a.cache_read_tokens + b.cache_read_tokens, estimated_cost_usd=cost)
