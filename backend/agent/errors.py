"""One reading of a failed model call: `classify_api_error(err)` → `ApiFailure(message, code, retryable)`.

The chat loop, the AI columns and the eval harness all call the Messages API through the `anthropic` SDK
and all have to answer the same two questions when a call fails: what do we tell the person, and is it
worth trying again? The answer is decided here, once.

- `message` is our own text, never the upstream error text: that text can carry request ids, account
  details or prompt fragments, so it is logged here (with the status and request id) and not forwarded.
- `retryable` says whether waiting can cure it: overload, rate limits, 5xx, timeouts and lost
  connections can; a spent budget, a refused key, a forbidden or unknown model, or a request the API
  rejects as invalid cannot, and the message says what to do instead.
- `code` is the API's own error type where there is one (`overloaded_error`, `authentication_error`, …)
  so the wire value stays what the chat has always sent, plus `timeout` and `connection_lost`.

The SDK speaks httpx2: a connection failure surfaces as `anthropic.APIConnectionError` (timeouts as its
subclass `APITimeoutError`), or, for a stream cut mid-body, as a raw `httpx2.TransportError`.
"""

from __future__ import annotations

import email.utils
import logging
from dataclasses import dataclass
from datetime import UTC, datetime

import anthropic
import httpx2

log = logging.getLogger(__name__)

# What a model call may raise that is the API's or the network's fault, not ours.
API_ERRORS: tuple[type[BaseException], ...] = (anthropic.APIError, httpx2.TransportError)

# Failures that every later call with the same key and model would hit too: a batch stops at the first.
_ACCOUNT_CODES = frozenset({"billing_error", "authentication_error", "permission_error", "not_found_error"})

# `error.details.error_code` values that mean the account's money ran out, whatever the status (the API
# sends spend limits as 429 and 402, which would otherwise read as "wait and retry").
_SPEND_LIMIT_CODES = frozenset({
    "enforced_spend_limit_reached", "contract_spend_limit_reached", "linked_organization_spend_limit_reached",
    "linked_organization_billing_unavailable",
})


@dataclass(frozen=True)
class ApiFailure:
    message: str  # ours, for the person in front of the screen
    code: str
    retryable: bool

    @property
    def affects_every_call(self) -> bool:
        """True when the key, the account or the model is the problem, so every other call would fail the
        same way: a column or a benchmark run stops instead of failing row by row."""
        return self.code in _ACCOUNT_CODES


_SPEND_LIMIT = ApiFailure("The model account's spend limit is reached; an admin must raise it (retrying will "
                          "not help).", "billing_error", retryable=False)

# By the API's `error.type` (also what a mid-stream `error` event carries, where the status is 200).
_BY_TYPE: dict[str, ApiFailure] = {
    "billing_error": _SPEND_LIMIT,
    "authentication_error": ApiFailure("The API key was refused; check ANTHROPIC_API_KEY.",
                                       "authentication_error", retryable=False),
    "permission_error": ApiFailure("The API key may not use this model; check the key's permissions or "
                                   "COLLEAGUE_MODEL.", "permission_error", retryable=False),
    "not_found_error": ApiFailure("The model was not found; check COLLEAGUE_MODEL.", "not_found_error",
                                  retryable=False),
    "invalid_request_error": ApiFailure("The model API rejected the request as invalid; retrying will not "
                                        "help. Please report this.", "invalid_request_error",
                                        retryable=False),
    "request_too_large": ApiFailure("The request is too large for the model; shorten the conversation or "
                                    "the document.", "request_too_large", retryable=False),
    "rate_limit_error": ApiFailure("Too many requests to the model. Please wait a moment and retry.",
                                   "rate_limit_error", retryable=True),
    "overloaded_error": ApiFailure("The model is overloaded right now. Please try again in a moment.",
                                   "overloaded_error", retryable=True),
    "api_error": ApiFailure("The model service had an internal error. Please retry.", "api_error",
                            retryable=True),
    "timeout_error": ApiFailure("The model did not answer in time. Please retry.", "timeout", retryable=True),
    "conflict_error": ApiFailure("The model service reported a conflict. Please retry.", "conflict_error",
                                 retryable=True),
}

# By HTTP status, when the body carries no type we know.
_BY_STATUS: dict[int, str] = {
    400: "invalid_request_error", 401: "authentication_error", 402: "billing_error", 403: "permission_error",
    404: "not_found_error", 408: "timeout_error", 409: "conflict_error", 413: "request_too_large",
    422: "invalid_request_error", 429: "rate_limit_error", 504: "timeout_error", 529: "overloaded_error",
}

_TIMEOUT = _BY_TYPE["timeout_error"]
_CONNECTION_LOST = ApiFailure("The connection to the model was lost. Please retry.", "connection_lost",
                              retryable=True)
_UNREADABLE = ApiFailure("The model's answer could not be read. Please retry.", "api_error", retryable=True)


def _is_spend_limit(err: anthropic.APIStatusError) -> bool:
    if err.error_code in _SPEND_LIMIT_CODES or isinstance(err, anthropic.PaymentRequiredError):
        return True
    code = str(err.error_code or "").lower()
    if any(word in code for word in ("spend_limit", "billing", "credit")):
        return True
    # The API has long reported an empty prepaid balance as a plain 400, and some spend limits as a 429
    # without a code: its wording is then the only sign.
    text = (err.api_message or "").lower()
    return err.status_code in (400, 429) and any(
        word in text for word in ("credit balance", "spend limit", "credit limit", "billing", "usage limit"))


def _status_failure(err: anthropic.APIStatusError) -> ApiFailure:
    if _is_spend_limit(err):
        return _SPEND_LIMIT
    kind = err.type if err.type in _BY_TYPE else _BY_STATUS.get(err.status_code)
    if kind is not None:
        return _BY_TYPE[kind]
    if err.status_code >= 500:
        return _BY_TYPE["api_error"]
    return ApiFailure(f"The model API refused the request (HTTP {err.status_code}); retrying will not help.",
                      err.type or f"http_{err.status_code}", retryable=False)


def stalled(idle_seconds: float) -> ApiFailure:
    """The model call went silent (see `LoopLimits.idle_timeout`); what was written so far is kept."""
    return ApiFailure(message=f"The model stopped responding (nothing for {idle_seconds:g} s), so the answer "
                              "was cut short. Please retry.", code="stalled", retryable=True)


def classify_api_error(err: BaseException) -> ApiFailure:
    """What to tell the person about a failed model call, and whether a retry can help. Logs the upstream
    text, which the returned message never contains."""
    if isinstance(err, anthropic.APIStatusError):
        failure = _status_failure(err)
        log.warning("model API error %s (HTTP %s, request %s, type %s, error_code %s): %s", failure.code,
                    err.status_code, err.request_id, err.type, err.error_code, err.api_message or err.message)
        return failure
    if isinstance(err, anthropic.APITimeoutError | httpx2.TimeoutException):
        failure = _TIMEOUT
    elif isinstance(err, anthropic.APIConnectionError | httpx2.TransportError):
        failure = _CONNECTION_LOST
    elif isinstance(err, anthropic.APIError):  # a reply the SDK could not read, or an error it names no better
        failure = _UNREADABLE
    else:
        log.error("unexpected error from a model call", exc_info=err)
        return ApiFailure("The model call failed unexpectedly.", "internal_error", retryable=False)
    log.warning("model API error %s: %s: %s", failure.code, type(err).__name__, err)
    return failure


def told_wait(err: BaseException) -> float | None:
    """Seconds the API asked us to wait before retrying (`retry-after-ms`, else `retry-after` in seconds or
    as an HTTP date), or None when it did not say."""
    response = getattr(err, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        if (ms := headers.get("retry-after-ms")) is not None:
            return max(0.0, float(ms) / 1000)
        if (raw := headers.get("retry-after")) is None:
            return None
        try:
            return max(0.0, float(raw))
        except ValueError:
            when = email.utils.parsedate_to_datetime(raw)
            return max(0.0, (when - datetime.now(UTC)).total_seconds())
    except (TypeError, ValueError):  # unreadable: as if it had not said
        return None
