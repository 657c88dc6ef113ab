"""No input is a 500: ids past the database's integer range, a hostile page token, and one error body shape
(`{error, detail, errors?}`) for every error, declared in the OpenAPI of every route."""

from __future__ import annotations

import base64
from typing import Any

from starlette.testclient import TestClient

from backend.sources.paging import encode_page_token
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.fake_page import CONTEXT
from tests.streams.helpers import make_stream

# 2^31 overflows PostgreSQL's INTEGER, 2^63 SQLite's; 0 and -1 name no row either.
BAD_IDS = [2**31, 2**63, 2**70, 0, -1]


def assert_error_body(r: Any, status: int | tuple[int, ...]) -> dict[str, Any]:
    """The one error shape: `error` a code, `detail` a sentence, `errors` (only for invalid input) a list of
    {loc, msg}; nothing else."""
    statuses = status if isinstance(status, tuple) else (status,)
    assert r.status_code in statuses, (r.request.method, r.request.url, r.status_code, r.text)
    body = r.json()
    assert set(body) <= {"error", "detail", "errors"} and {"error", "detail"} <= set(body), body
    assert isinstance(body["error"], str) and isinstance(body["detail"], str) and body["detail"], body
    if "errors" in body:
        assert body["errors"] and all(set(e) == {"loc", "msg"} for e in body["errors"]), body
    return body


def test_conversation_ids_out_of_range_are_refused(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    calls = [call for bad in BAD_IDS for call in [
        ("GET", f"/api/conversations/{bad}", None),
        ("PATCH", f"/api/conversations/{bad}", {"title": "renamed"}),
        ("DELETE", f"/api/conversations/{bad}", None),
        ("POST", f"/api/conversations/{bad}/stop", None),
        ("POST", f"/api/conversations/{bad}/payloads/p1/decision", {"decision": "accepted"}),
        ("POST", "/api/chat/stream", {"message": "hello", "context": CONTEXT, "conversation_id": bad}),
    ]]
    for method, url, body in calls:
        r = alice.request(method, url, json=body)
        assert assert_error_body(r, 422)["error"] == "invalid_input"
    assert fake_llm.requests == []


def test_stream_ids_out_of_range_are_refused(admin: TestClient, alice: TestClient) -> None:
    sid = make_stream(admin)["id"]
    calls = [call for bad in BAD_IDS for call in [
        (alice, "GET", f"/api/streams/{bad}", None),
        (admin, "GET", f"/api/streams/{bad}", None),
        (admin, "PATCH", f"/api/streams/{bad}", {"name": "x"}),
        (admin, "GET", f"/api/streams/{bad}/instructions/history", None),
        (admin, "GET", f"/api/streams/{bad}/instructions/diff", None),
        (admin, "POST", f"/api/streams/{bad}/instructions/restore", {"version_id": 1}),
        (admin, "GET", f"/api/streams/{sid}/instructions/diff?from={bad}", None),
        (admin, "GET", f"/api/streams/{sid}/instructions/diff?to={bad}", None),
        (admin, "POST", f"/api/streams/{sid}/instructions/restore", {"version_id": bad}),
        (admin, "PATCH", f"/api/streams/{sid}", {"chat_instructions": "New.", "expected_version_id": bad}),
        (admin, "GET", f"/api/chat/prompt-preview?page=tablizer&stream_id={bad}", None),
    ]]
    for client, method, url, body in calls:
        r = client.request(method, url, json=body)
        assert assert_error_body(r, 422)["error"] == "invalid_input"
    assert admin.get(f"/api/streams/{sid}").json()["version_count"] == 1  # nothing was written


def test_a_deeply_nested_page_token_is_a_readable_422(alice: TestClient) -> None:
    hostile = base64.urlsafe_b64encode(b"[" * 1400).decode()
    well_formed_but_huge = encode_page_token({"o": 2**70, "q": "x"})
    for token in (hostile, well_formed_but_huge, encode_page_token({"o": [[1]]}), "@@@", "e30"):  # e30: {}
        r = alice.get("/api/trials/search", params={"condition": "melanoma", "page_token": token})
        body = assert_error_body(r, 422)
        assert body["error"] == "invalid_input" and "page_token" in body["detail"], body
    first = alice.get("/api/trials/search", params={"condition": "cancer", "page_size": 2}).json()
    assert first["next_page_token"]  # a real token still pages
    second = alice.get("/api/trials/search", params={"condition": "cancer", "page_size": 2,
                                                     "page_token": first["next_page_token"]})
    assert second.status_code == 200 and second.json()["trials"] != first["trials"]


def test_one_error_shape_for_every_kind_of_error(app: Any, alice: TestClient) -> None:
    # An AppError, request validation (body, query, path), a service's own validation, Starlette's errors.
    not_found = assert_error_body(alice.get("/api/conversations/999"), 404)
    assert not_found == {"error": "not_found", "detail": "Conversation 999 not found."}
    invalid_body = assert_error_body(alice.patch("/api/conversations/1", json={"title": ""}), 422)
    assert invalid_body["errors"] == [{"loc": ["body", "title"], "msg": invalid_body["errors"][0]["msg"]}]
    assert invalid_body["detail"] == f"title: {invalid_body['errors'][0]['msg']}"
    invalid_query = assert_error_body(alice.get("/api/conversations", params={"app": "nope"}), 422)
    assert invalid_query["errors"][0]["loc"] == ["query", "app"] and invalid_query["detail"].startswith("app: ")
    by_service = assert_error_body(alice.get("/api/trials/search", params={"page_size": 1000}), 422)
    assert by_service["errors"][0]["loc"] == ["query", "page_size"] and by_service["detail"].startswith("page_size:")
    assert assert_error_body(alice.get("/api/trials/NOT-AN-ID"), 422)["error"] == "invalid_input"
    not_json = alice.post("/api/streams", content=b"\xff{", headers={"content-type": "application/json"})
    assert_error_body(not_json, (400, 422))
    method = assert_error_body(alice.put("/api/conversations/1"), 405)
    assert method["error"] == "method_not_allowed"
    assert assert_error_body(alice.get("/api/no-such-route"), 404)["error"] == "not_found"
    assert assert_error_body(alice.post("/api/no-such-route"), 404)["error"] == "not_found"  # no route, any method
    assert assert_error_body(TestClient(app).get("/api/pages"), 401)["error"] == "unauthorized"


def test_the_openapi_declares_the_error_body_for_every_error(alice: TestClient) -> None:
    spec = alice.get("/openapi.json").json()
    assert set(spec["components"]["schemas"]["ErrorBody"]["properties"]) == {"error", "detail", "errors"}
    assert "HTTPValidationError" not in spec["components"]["schemas"]  # FastAPI's other 422 shape
    declared = 0
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            for status, response in operation["responses"].items():
                if int(status) >= 400:
                    declared += 1
                    schema = response["content"]["application/json"]["schema"]
                    assert schema == {"$ref": "#/components/schemas/ErrorBody"}, (method, path, status)
    assert declared > 40
    conversation = spec["paths"]["/api/conversations/{conversation_id}"]["get"]
    assert set(conversation["responses"]) == {"200", "401", "404", "422"}
    conversation_id = conversation["parameters"][0]["schema"]
    assert (conversation_id["minimum"], conversation_id["maximum"]) == (1, 2**31 - 1)
