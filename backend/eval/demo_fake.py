"""An in-process fake of the Messages API that answers evaluator requests with the demo heuristics.

The SDK is the real `anthropic.AsyncAnthropic`; only its transport is an `httpx2.MockTransport`, so the
SDK builds, sends and parses every byte as it would against the API. The harness uses this for
`--model demo` when the app's demo model client (`backend.agent.llm.make_client`) is not available.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import count
from typing import Any

import anthropic
import httpx2

from backend.eval.demo_verdict import demo_reply_text

DEMO_MODEL = "colleague-demo"

ReplyFn = Callable[[str, str], str | None]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content or [] if isinstance(block, dict))


def estimate_tokens(text: str) -> int:
    """About four characters per token; the demo model has no tokenizer."""
    return max(1, (len(text) + 3) // 4)


def message_response(text: str, model: str, input_tokens: int, *, stop_reason: str = "end_turn",
                     message_id: str = "msg_demo") -> httpx2.Response:
    """A non-streaming Messages API response carrying one text block."""
    return httpx2.Response(200, headers={"request-id": f"req_{message_id}"}, json={
        "id": message_id, "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": text}], "stop_reason": stop_reason, "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": estimate_tokens(text)},
    })


def error_response(status: int, error_type: str, message: str) -> httpx2.Response:
    return httpx2.Response(status, json={"type": "error", "error": {"type": error_type, "message": message}})


def messages_handler(reply: ReplyFn = demo_reply_text) -> Callable[[httpx2.Request], httpx2.Response]:
    """A MockTransport handler for `POST /v1/messages` answering with `reply(system, last user text)`."""
    ids = count(1)

    def handle(request: httpx2.Request) -> httpx2.Response:
        if request.method != "POST" or not request.url.path.endswith("/v1/messages"):
            return error_response(404, "not_found_error",
                                  f"{request.method} {request.url.path} is not served")
        body = json.loads(request.content)
        if body.get("stream"):
            return error_response(400, "invalid_request_error", "this fake answers non-streaming requests")
        system = _text_of(body.get("system", ""))
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        user_text = _text_of(users[-1]["content"]) if users else ""
        text = reply(system, user_text)
        if text is None:
            return error_response(400, "invalid_request_error",
                                  "the eval demo model only answers criterion-eval and text-eval requests")
        return message_response(text, body.get("model", DEMO_MODEL), estimate_tokens(system + user_text),
                                message_id=f"msg_demo_{next(ids)}")

    return handle


def make_fake_client(handler: Callable[[httpx2.Request], Any] | None = None, *,
                     max_retries: int = 0) -> anthropic.AsyncAnthropic:
    """The real SDK client over a MockTransport (default: the demo heuristics)."""
    transport = httpx2.MockTransport(handler or messages_handler())
    return anthropic.AsyncAnthropic(api_key="test", base_url="http://demo.invalid", max_retries=max_retries,
                                    http_client=httpx2.AsyncClient(transport=transport))
