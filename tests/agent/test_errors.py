"""classify_api_error over the exceptions the real `anthropic` SDK raises: each error comes from a call
through the SDK to an `httpx2.MockTransport` answering as the API would (status, error body, SSE error
event, or a failing network), so the SDK picks the exception class itself."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import anthropic
import httpx2
import pytest

from backend.agent.errors import API_ERRORS, ApiFailure, classify_api_error

UPSTREAM = "upstream detail req_0123 org-secret"  # must be logged, never shown


def raised(handler: Callable[[httpx2.Request], httpx2.Response], *, stream: bool = False) -> BaseException:
    """The exception the SDK raises for one `messages.create` answered by `handler`."""
    client = anthropic.Anthropic(api_key="test", base_url="http://model.invalid", max_retries=0,
                                 http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    try:
        with pytest.raises(API_ERRORS) as caught:
            if stream:
                with client.messages.stream(model="m", max_tokens=10,
                                            messages=[{"role": "user", "content": "hi"}]) as s:
                    s.get_final_message()
            else:
                client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
        return caught.value
    finally:
        client.close()


def status(code: int, error_type: str | None, error_code: str | None = None,
           message: str = UPSTREAM) -> BaseException:
    error: dict[str, object] = {"message": message}
    if error_type is not None:
        error["type"] = error_type
    if error_code is not None:
        error["details"] = {"error_code": error_code}
    return raised(lambda request: httpx2.Response(code, headers={"request-id": "req_test"},
                                                  json={"type": "error", "error": error}))


def failing(exc: Exception) -> Callable[[httpx2.Request], httpx2.Response]:
    def handle(request: httpx2.Request) -> httpx2.Response:
        raise exc
    return handle


@pytest.mark.parametrize(("err", "sdk_class", "code", "hint"), [
    (lambda: status(401, "authentication_error"), anthropic.AuthenticationError, "authentication_error",
     "ANTHROPIC_API_KEY"),
    (lambda: status(403, "permission_error"), anthropic.PermissionDeniedError, "permission_error",
     "COLLEAGUE_MODEL"),
    (lambda: status(404, "not_found_error"), anthropic.NotFoundError, "not_found_error", "COLLEAGUE_MODEL"),
    (lambda: status(400, "invalid_request_error"), anthropic.BadRequestError, "invalid_request_error",
     "report"),
    (lambda: status(422, None), anthropic.UnprocessableEntityError, "invalid_request_error", "report"),
    (lambda: status(413, "request_too_large"), anthropic.ContentTooLargeError, "request_too_large", "shorten"),
    (lambda: status(402, "billing_error"), anthropic.PaymentRequiredError, "billing_error", "admin"),
    (lambda: status(400, "invalid_request_error",
                    message="Your credit balance is too low to access the Anthropic API."),
     anthropic.BadRequestError, "billing_error", "admin"),
    # The API reports spend limits as 429s: a rate limit class, but waiting will not cure it.
    (lambda: status(429, "rate_limit_error", "enforced_spend_limit_reached"),
     anthropic.EnforcedSpendLimitReachedError, "billing_error", "admin"),
    (lambda: status(429, "rate_limit_error", "contract_spend_limit_reached"),
     anthropic.ContractSpendLimitReachedError, "billing_error", "admin"),
    (lambda: status(402, "billing_error", "linked_organization_spend_limit_reached"),
     anthropic.LinkedOrganizationSpendLimitReachedError, "billing_error", "admin"),
])
def test_errors_that_waiting_cannot_cure_are_not_retryable(err, sdk_class, code, hint):
    exc = err()
    assert type(exc) is sdk_class
    failure = classify_api_error(exc)
    assert (failure.code, failure.retryable) == (code, False)
    assert hint in failure.message and UPSTREAM not in failure.message


@pytest.mark.parametrize(("err", "sdk_class", "code"), [
    (lambda: status(429, "rate_limit_error"), anthropic.RateLimitError, "rate_limit_error"),
    (lambda: status(529, "overloaded_error"), anthropic.OverloadedError, "overloaded_error"),
    (lambda: status(500, "api_error"), anthropic.InternalServerError, "api_error"),
    (lambda: raised(lambda request: httpx2.Response(502, text="<html>Bad gateway</html>")),
     anthropic.InternalServerError, "api_error"),
    (lambda: status(503, None), anthropic.ServiceUnavailableError, "api_error"),
    (lambda: status(504, None), anthropic.GatewayTimeoutError, "timeout"),
    (lambda: status(408, None), anthropic.RequestTimeoutError, "timeout"),
    (lambda: status(409, None), anthropic.ConflictError, "conflict_error"),
    (lambda: raised(failing(httpx2.ReadTimeout("read timed out"))), anthropic.APITimeoutError, "timeout"),
    (lambda: raised(failing(httpx2.ConnectError("connection refused"))), anthropic.APIConnectionError,
     "connection_lost"),
])
def test_errors_that_pass_are_retryable(err, sdk_class, code):
    exc = err()
    assert type(exc) is sdk_class
    failure = classify_api_error(exc)
    assert (failure.code, failure.retryable) == (code, True)
    assert UPSTREAM not in failure.message and "try" in failure.message.lower()


def test_an_error_event_in_the_middle_of_a_stream_is_read_by_its_type():
    body = ('event: error\ndata: ' + json.dumps({"type": "error", "error": {"type": "overloaded_error",
                                                                           "message": UPSTREAM}}) + "\n\n")
    exc = raised(lambda request: httpx2.Response(200, headers={"content-type": "text/event-stream"},
                                                 content=body.encode()), stream=True)
    assert isinstance(exc, anthropic.APIStatusError) and exc.status_code == 200
    assert classify_api_error(exc) == ApiFailure(
        "The model is overloaded right now. Please try again in a moment.", "overloaded_error", retryable=True)


@pytest.mark.parametrize(("exc", "code"), [
    (httpx2.RemoteProtocolError("peer closed connection without sending complete message body"),
     "connection_lost"),
    (httpx2.ReadTimeout("read timed out"), "timeout"),
])
def test_raw_transport_errors_from_a_cut_stream(exc, code):
    failure = classify_api_error(exc)
    assert (failure.code, failure.retryable) == (code, True)


def test_an_unknown_status_is_not_retried_and_says_so():
    exc = status(418, "teapot_error")
    assert type(exc) is anthropic.APIStatusError
    failure = classify_api_error(exc)
    assert (failure.code, failure.retryable) == ("teapot_error", False)
    assert "HTTP 418" in failure.message and UPSTREAM not in failure.message


def test_a_non_api_error_is_an_internal_error():
    failure = classify_api_error(ValueError("bug"))
    assert (failure.code, failure.retryable) == ("internal_error", False)


def test_the_upstream_text_is_logged_not_returned(caplog):
    with caplog.at_level(logging.WARNING, logger="backend.agent.errors"):
        failure = classify_api_error(status(401, "authentication_error"))
    assert UPSTREAM not in failure.message
    assert UPSTREAM in caplog.text and "req_test" in caplog.text and "HTTP 401" in caplog.text


def test_only_account_failures_stop_every_call():
    stops = {code for code in ("billing_error", "authentication_error", "permission_error", "not_found_error",
                               "invalid_request_error", "rate_limit_error", "overloaded_error", "timeout",
                               "connection_lost") if ApiFailure("m", code, retryable=False).affects_every_call}
    assert stops == {"billing_error", "authentication_error", "permission_error", "not_found_error"}
