"""How the routers run a synchronous endpoint: in one thread hop.

FastAPI runs a plain `def` endpoint in its threadpool and then validates what it returned in a second
hop, because a returned ORM object might still lazy-load. Ours return pydantic models built inside their
sessions, so the second hop only costs a wait: each hop comes back when the event loop's current turn
ends, and beside a hundred streams those turns are what an ordinary request waits for. `OneHopRoute`
(every router's `route_class`) hands FastAPI an async wrapper of such an endpoint that runs it in one hop;
the signature is the endpoint's own (`functools.wraps`), so parameters and the OpenAPI are unchanged.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import anyio
from fastapi.routing import APIRoute


def in_one_hop(endpoint: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(endpoint)
    async def run(*args: Any, **kwargs: Any) -> Any:
        return await anyio.to_thread.run_sync(functools.partial(endpoint, *args, **kwargs))

    return run


class OneHopRoute(APIRoute):
    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        if not (inspect.iscoroutinefunction(endpoint) or inspect.isasyncgenfunction(endpoint)
                or inspect.isgeneratorfunction(endpoint)):  # FastAPI streams what a generator yields
            endpoint = in_one_hop(endpoint)
        super().__init__(path, endpoint, **kwargs)
