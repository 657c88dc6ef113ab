"""The scripted fake Messages API (tests/fakes/anthropic_server.py), taught to answer non-streaming
requests too: the evaluator behind AI columns sends `messages.create` without `stream`.

A non-streaming answer is a JSON Message sent after `delay` seconds; while it waits the fake trickles
whitespace (valid before JSON), so a client that hangs up is noticed at once, as with a stream: the
`disconnected` flag is set and `disconnects` counts every abandoned request. `Script.slow` never answers.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from backend.agent.demo.wire import Reply, error_body
from tests.fakes.anthropic_server import FakeAnthropic, Script, validate_request

TICK = 0.02


@dataclass
class ColumnFake(FakeAnthropic):
    disconnects: int = 0

    def reset(self) -> None:
        super().reset()
        self.disconnects = 0

    async def _messages(self, request: Request) -> Response:
        body = await request.json()
        if body.get("stream"):
            return await super()._messages(request)
        self.requests.append(body)
        problems = validate_request(body)
        if problems:
            self.violations.append(problems)
            return JSONResponse(error_body("invalid_request_error", "; ".join(problems)), status_code=400,
                                headers={"x-should-retry": "false"})
        if not self.scripts and self.default is not None:
            self.scripts.append(self.default)
        if not self.scripts:
            return JSONResponse(error_body("api_error", "fake server: no scripted response left"),
                                status_code=500, headers={"x-should-retry": "false"})
        item = self.scripts.popleft()
        script = item(body) if callable(item) else item
        if script.kind == "http_error":
            return JSONResponse(error_body(script.error_type, f"scripted {script.error_type}"),
                                status_code=script.status, headers={"x-should-retry": "false"})
        return StreamingResponse(self._message_json(script), media_type="application/json")

    async def _message_json(self, script: Script) -> AsyncIterator[bytes]:
        reply = script.reply or Reply()
        try:
            deadline = time.monotonic() + (10 if script.kind == "slow" else script.delay)
            while time.monotonic() < deadline:
                yield b" "
                await asyncio.sleep(TICK)
            if script.kind == "slow":
                return
            yield json.dumps({
                "id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant",
                "model": "claude-fake", "content": reply.blocks, "stop_reason": reply.stop_reason,
                "stop_sequence": None, "usage": {"input_tokens": reply.input_tokens or 120,
                                                 "output_tokens": reply.output_tokens or 30}}).encode()
        except (asyncio.CancelledError, GeneratorExit):
            self.disconnected.set()
            self.disconnects += 1
            raise


def start_column_fake() -> tuple[ColumnFake, Callable[[], None]]:
    fake = ColumnFake()
    app = Starlette(routes=[Route("/v1/messages", fake._messages, methods=["POST"])])
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical",
                                           lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    fake.url = f"http://127.0.0.1:{port}"

    def stop() -> None:
        server.should_exit = True
        thread.join(timeout=5)

    return fake, stop
