"""Politeness towards the live upstreams: request spacing, bounded retries, error mapping, and the
client each live source keeps (`UpstreamClient`).

One `RateLimiter` per upstream is shared by every user of the process (both services keep a
module-level instance), because the upstream limits count requests per IP, not per user. The
limiter reserves time slots under a threading lock and sleeps outside it, so it works from any
event loop or thread. Clock and sleep are injectable: tests run the backoff logic without waiting.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, TypedDict

import httpx

from backend.errors import UpstreamError, UpstreamUnavailable

Sleep = Callable[[float], Awaitable[None]]
Clock = Callable[[], float]


class RateLimiter:
    """At most one request per `min_interval` seconds, across all callers of this instance."""

    def __init__(self, min_interval: float, *, clock: Clock = time.monotonic, sleep: Sleep = asyncio.sleep):
        self.min_interval = min_interval
        self.clock = clock
        self.sleep = sleep
        self._next_slot = 0.0
        self._lock = threading.Lock()

    async def acquire(self) -> None:
        with self._lock:
            now = self.clock()
            slot = max(now, self._next_slot)
            self._next_slot = slot + self.min_interval
        if slot > now:
            await self.sleep(slot - now)

    def hold_off(self, seconds: float) -> None:
        """After a 429 nobody in this process should call before `seconds` from now.

        Pushing the shared slot (instead of sleeping locally and then waiting for a slot too) is
        what keeps a retry from waiting twice, and it makes concurrent users back off as well.
        """
        with self._lock:
            self._next_slot = max(self._next_slot, self.clock() + seconds)


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3
    backoff_base: float = 2.0  # the spec's sleep(2^attempt): 2 s, 4 s, 8 s when there is no Retry-After
    max_backoff: float = 30.0  # a longer Retry-After means "come back later": fail now instead
    retry_statuses: frozenset[int] = frozenset({429, 500, 502, 503, 504})


USER_AGENT = "Colleague/0.1 (research assistant)"


class ClientOptions(TypedDict, total=False):
    """What a live source can be given instead of its upstream's defaults (tests: a mock transport, a
    limiter on a fake clock)."""

    base_url: str
    transport: httpx.AsyncBaseTransport | None
    limiter: RateLimiter | None
    retry: RetryPolicy | None
    timeout: float  # seconds to read; connecting gets 5


class UpstreamClient:
    """A live upstream's pooled connections, and the limiter and retry policy its requests go through
    (`send`). `limiter` is the upstream's shared one, unless the options name another."""

    def __init__(self, options: ClientOptions, *, upstream: str, base_url: str, limiter: RateLimiter,
                 headers: Mapping[str, str] | None = None, follow_redirects: bool = False) -> None:
        self._client = httpx.AsyncClient(
            base_url=options.get("base_url", base_url), transport=options.get("transport"),
            follow_redirects=follow_redirects, timeout=httpx.Timeout(options.get("timeout", 20.0), connect=5.0),
            headers={**(headers or {}), "User-Agent": USER_AGENT},
        )
        self._upstream = upstream  # its name in error messages
        self._limiter = options.get("limiter") or limiter
        self._retry = options.get("retry") or RetryPolicy()

    async def aclose(self) -> None:
        await self._client.aclose()

    def _json_object(self, response: httpx.Response, asked: str = "") -> dict[str, Any]:
        """The response's JSON object; anything else is the upstream's fault (`UpstreamError`). `asked`
        names the endpoint in the message, where the upstream has several."""
        where = f" {asked}" if asked else ""
        try:
            body = response.json()
        except ValueError as exc:
            raise UpstreamError(f"{self._upstream} answered{where} with something that is not JSON") from exc
        if not isinstance(body, dict):
            raise UpstreamError(f"{self._upstream} answered{where} with unexpected JSON ({type(body).__name__})")
        return body


def retry_after_seconds(value: str | None, *, now: float | None = None) -> float | None:
    """Retry-After is either delay-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


async def send(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    upstream: str,
    limiter: RateLimiter,
    policy: RetryPolicy,
    params: Mapping[str, Any] | None = None,
    data: Mapping[str, Any] | None = None,
    is_rate_limited: Callable[[httpx.Response], bool] | None = None,
) -> httpx.Response:
    """Send one logical request: wait for a slot, retry 429/5xx with backoff, map network failures.

    Returns the response for every other status (the caller decides what 400 or 404 mean).
    Raises `UpstreamUnavailable` for timeouts, network errors and rate limiting that outlasts the
    retries, `UpstreamError` for persistent 5xx.
    """
    attempt = 0
    while True:
        await limiter.acquire()
        try:
            response = await client.request(method, url, params=params, data=data)
        except httpx.TimeoutException as exc:
            raise UpstreamUnavailable(
                f"{upstream} did not answer in time ({type(exc).__name__}); try again in a moment"
            ) from exc
        except httpx.TransportError as exc:
            raise UpstreamUnavailable(f"{upstream} could not be reached ({exc.__class__.__name__})") from exc

        status = response.status_code
        if is_rate_limited is not None and status == 200 and is_rate_limited(response):
            status = 429  # E-utilities sometimes reports its rate limit inside a 200 body
        if status not in policy.retry_statuses:
            return response

        delay = retry_after_seconds(response.headers.get("Retry-After"))
        if delay is None:
            delay = min(policy.backoff_base * 2**attempt, policy.max_backoff)
        if attempt >= policy.max_retries or delay > policy.max_backoff:
            raise _give_up(upstream, status, attempt, delay)
        attempt += 1
        limiter.hold_off(delay)


def _give_up(upstream: str, status: int, retries: int, delay: float) -> UpstreamError:
    if status == 429:
        return UpstreamUnavailable(
            f"{upstream} is rate limiting requests (HTTP 429) and still was after {retries} "
            f"retries; try again in about {max(1, round(delay))} s"
        )
    return UpstreamError(f"{upstream} failed with HTTP {status} after {retries} retries; try again later")


def error_text(response: httpx.Response, keys: tuple[str, ...], empty: str) -> str:
    """What an upstream said went wrong: the first of `keys` a JSON body has, else the body as text
    (clipped), else `empty`."""
    text = response.text.strip()
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and (found := next((body[k] for k in keys if body.get(k)), None)):
        text = str(found)
    return text[:500] or empty
