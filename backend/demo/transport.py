"""An httpx2 transport that answers Messages API requests locally with the demo model.

`AsyncAnthropic(http_client=httpx2.AsyncClient(transport=DemoTransport()))` then behaves as if it talked
to the API: streaming (SSE frames with small pauses so a UI visibly streams), non-streaming JSON,
token counting, and error bodies in the API's shape.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator

import httpx2

from backend.demo.brain import answer
from backend.demo.wire import Reply, error_body, reply_frames

DEMO_MODEL_ID = "colleague-demo-1"


class _FrameStream(httpx2.AsyncByteStream):
    def __init__(self, frames: list[bytes], delay: float) -> None:
        self._frames = frames
        self._delay = delay

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self._frames:
            if self._delay and b"content_block_delta" in chunk:
                await asyncio.sleep(self._delay)
            yield chunk


class DemoTransport(httpx2.AsyncBaseTransport):
    def __init__(self, delay: float = 0.02) -> None:
        self.delay = delay

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        try:
            body = json.loads(await request.aread() or b"{}")
        except json.JSONDecodeError:
            return httpx2.Response(400, json=error_body("invalid_request_error", "Body is not JSON."))
        if path.endswith("/v1/messages/count_tokens"):
            return httpx2.Response(200, json={"input_tokens": max(1, len(json.dumps(body)) // 4)})
        if not path.endswith("/v1/messages"):
            return httpx2.Response(404, json=error_body("not_found_error", f"No route {path}."))
        reply = answer(body)
        headers = {"request-id": f"req_demo_{uuid.uuid4().hex[:12]}"}
        if body.get("stream"):
            frames = list(reply_frames(DEMO_MODEL_ID, reply))
            headers["content-type"] = "text/event-stream"
            return httpx2.Response(200, headers=headers, stream=_FrameStream(frames, self.delay))
        return httpx2.Response(200, headers=headers, json=_message_json(reply))


def _message_json(reply: Reply) -> dict[str, object]:
    return {"id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant",
            "model": DEMO_MODEL_ID, "content": reply.blocks, "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}
