"""One classification of Anthropic API errors, for the chat loop, AI columns and the eval harness.

The user reads our message, never the upstream's text (that is logged); `retryable` says whether waiting
can help — a spend limit, a refused key or an invalid request cannot be cured by retrying.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import anthropic
import httpx2

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ApiFailure:
    message: str
    code: str
    retryable: bool


_BY_TYPE = {
    "overloaded_error": ("The model is overloaded right now. Please try again in a moment.", True),
    "rate_limit_error": ("Too many requests to the model. Please wait a moment and retry.", True),
    "api_error": ("The model service had an internal error. Please retry.", True),
    "timeout_error": ("The model did not answer in time. Please retry.", True),
    "authentication_error": ("The model service refused the API key. An admin must check "
                             "ANTHROPIC_API_KEY.", False),
    "permission_error": ("The API key may not use this model. An admin must check the key's "
                         "permissions or COLLEAGUE_MODEL.", False),
    "billing_error": ("The model account's credit or spend limit is used up. An admin must raise it; "
                      "retrying will not help.", False),
    "not_found_error": ("The model was not found. An admin must check COLLEAGUE_MODEL.", False),
    "invalid_request_error": ("The model service rejected this request. Start a new conversation or "
                              "shorten the request; retrying the same request will not help.", False),
    "request_too_large": ("This request is too large for the model. Start a new conversation or send "
                          "less page data.", False),
}
_BY_STATUS = {400: "invalid_request_error", 401: "authentication_error", 402: "billing_error",
              403: "permission_error", 404: "not_found_error", 413: "request_too_large",
              429: "rate_limit_error", 529: "overloaded_error"}


def _is_spend_limit(err: anthropic.APIStatusError) -> bool:
    """A limit on money, not on pace: the stable `error.details.error_code` (e.g. a 429's
    `enforced_spend_limit_reached`) when the API sends one, else the wording of its message."""
    code = str(getattr(err, "error_code", "") or "").lower()
    if any(word in code for word in ("spend_limit", "billing", "credit")):
        return True
    text = str(getattr(err, "message", "") or "").lower()
    return any(word in text for word in ("spend limit", "credit balance", "credit limit", "billing",
                                         "usage limit"))


def stalled(idle_seconds: float) -> ApiFailure:
    """The model call went silent (see `LoopLimits.idle_timeout`); what was written so far is kept."""
    return ApiFailure(message=f"The model stopped responding (nothing for {idle_seconds:g} s), so the answer "
                              "was cut short. Please retry.", code="stalled", retryable=True)


def classify_api_error(err: BaseException) -> ApiFailure:
    """What to tell the user about an error from the SDK. Raises what is not an API or transport error."""
    if isinstance(err, anthropic.APIStatusError):
        code = getattr(err, "type", None) or _BY_STATUS.get(err.status_code) or (
            "api_error" if err.status_code >= 500 else f"http_{err.status_code}")
        if err.status_code in (400, 403, 429) and _is_spend_limit(err):
            code = "billing_error"
        log.warning("model API error %s (%s): %s", err.status_code, code, err.message)
        message, retryable = _BY_TYPE.get(code, (
            "The model service returned an error. Please retry.", err.status_code >= 500))
        return ApiFailure(message=message, code=code, retryable=retryable)
    if isinstance(err, anthropic.APITimeoutError):
        return ApiFailure(message="The model did not answer in time. Please retry.", code="timeout",
                          retryable=True)
    if isinstance(err, anthropic.APIConnectionError | httpx2.TransportError):
        log.warning("model connection error: %r", err)
        return ApiFailure(message="The connection to the model was lost. Please retry.",
                          code="connection_lost", retryable=True)
    raise err
