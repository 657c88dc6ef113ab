"""A scripted fake of the Messages API on a real socket (uvicorn on 127.0.0.1), so the app's real
`anthropic` SDK parses every byte: SSE frames, mid-stream errors, dropped connections, truncation.
Non-streaming requests (the evaluator behind AI columns) get a JSON Message after `delay` seconds; while
they wait the fake trickles whitespace (valid before JSON) so a client that hangs up is noticed at once.

Every request is checked by `validate_request` (Anthropic's pairing and alternation rules); a violation
is answered with the API's 400 `invalid_request_error` and recorded in `violations`, so a test that
continues a conversation proves its stored history is acceptable to the API.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from backend.demo.wire import (
    Reply,
    block_frames,
    chunk_text,
    error_body,
    frame,
    message_end,
    message_start,
)
from tests.fakes.prompt_cache import PromptCache


def validate_request(body: dict[str, Any]) -> list[str]:
    """The rules the API enforces on history (reference/anthropic-and-sse.md §A.5)."""
    problems: list[str] = []
    messages = body.get("messages") or []
    if not messages or messages[0].get("role") != "user":
        problems.append("first message must be from the user")
    for i, msg in enumerate(messages):
        content = msg.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not content:
            problems.append(f"messages.{i}: content must be non-empty")
            continue
        if i and messages[i - 1].get("role") == msg.get("role"):
            problems.append(f"messages.{i}: roles must alternate")
        for block in content:
            if block.get("type") == "text" and not block.get("text"):
                problems.append(f"messages.{i}: text content blocks must be non-empty")
        if msg.get("role") == "assistant":
            uses = [b["id"] for b in content if b.get("type") == "tool_use"]
            if uses:
                nxt = messages[i + 1] if i + 1 < len(messages) else None
                results = [b for b in (nxt or {}).get("content", []) if isinstance(b, dict)
                           and b.get("type") == "tool_result"]
                if nxt is None or {r["tool_use_id"] for r in results} != set(uses):
                    problems.append(f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                                    "immediately after")
                elif any(b.get("type") != "tool_result" for b in nxt["content"][:len(results)]):
                    problems.append(f"messages.{i + 1}: tool_result blocks must come first")
        if msg.get("role") == "user" and i:
            prev_uses = {b.get("id") for b in messages[i - 1].get("content", []) if isinstance(b, dict)
                         and b.get("type") == "tool_use"}
            for block in content:
                if block.get("type") == "tool_result" and block.get("tool_use_id") not in prev_uses:
                    problems.append(f"messages.{i}: unexpected `tool_use_id` found in `tool_result` blocks")
    last = messages[-1] if messages else {}
    if last.get("role") == "assistant":  # a prefill: the model continues it
        blocks = last["content"] if isinstance(last["content"], list) else [{"type": "text", "text": last["content"]}]
        if any(b.get("type") != "text" for b in blocks):
            problems.append("a final assistant message (prefill) may hold text only")
        elif blocks and blocks[-1].get("text", "") != blocks[-1].get("text", "").rstrip():
            problems.append("final assistant content cannot end with trailing whitespace")
    elif messages and last.get("role") != "user":
        problems.append("the last message must be from the user")
    return problems


@dataclass
class Script:
    """One scripted response. Build with the classmethods."""

    kind: str
    reply: Reply | None = None
    status: int = 200
    error_type: str = ""
    after_blocks: int = 0  # for mid-stream failures: how many blocks to send first
    delay: float = 0.0
    endless: bool = False
    message: str = ""  # an error's `error.message` (upstream text the user must never see)
    error_code: str | None = None  # an error's `error.details.error_code`
    should_retry: bool | None = False  # the `x-should-retry` header of an HTTP error; None: not sent
    after_deltas: int | None = None  # for a stall: text deltas sent before going silent (None: not even
    # message_start)
    first: str = ""  # for a held answer: the text sent before it waits for `release`
    release: threading.Event | None = None
    reached: threading.Event = field(default_factory=threading.Event)  # set once `first` is sent

    @classmethod
    def answer(cls, reply: Reply, delay: float = 0.0) -> Script:
        return cls("answer", reply=reply, delay=delay)

    @classmethod
    def text(cls, text: str) -> Script:
        return cls.answer(Reply.text(text))

    @classmethod
    def http_error(cls, status: int, error_type: str, message: str = "", *, error_code: str | None = None,
                   should_retry: bool | None = False) -> Script:
        """An HTTP error before the stream. `should_retry=None` leaves out `x-should-retry`, as the API
        does on a 429, so the SDK's own retry policy decides."""
        return cls("http_error", status=status, error_type=error_type, message=message, error_code=error_code,
                   should_retry=should_retry)

    @classmethod
    def stream_error(cls, reply: Reply, error_type: str = "overloaded_error", after_blocks: int = 1) -> Script:
        return cls("stream_error", reply=reply, error_type=error_type, after_blocks=after_blocks)

    @classmethod
    def drop(cls, reply: Reply, after_blocks: int = 1) -> Script:
        """Send some frames, then close the connection without finishing the body."""
        return cls("drop", reply=reply, after_blocks=after_blocks)

    @classmethod
    def truncated(cls, reply: Reply) -> Script:
        """Close cleanly before message_delta/message_stop: the SDK returns stop_reason=None."""
        return cls("truncated", reply=reply)

    @classmethod
    def slow(cls, text: str = "Thinking about this carefully. ", delay: float = 0.02,
             input_tokens: int = 0) -> Script:
        """Stream text chunks until the client goes away (or ~10 s), for Stop and disconnect tests."""
        return cls("slow", reply=Reply.text(text, input_tokens=input_tokens), delay=delay, endless=True)

    @classmethod
    def stall(cls, text: str = "Half an answer. ", after_deltas: int | None = 1, hold: float = 10.0,
              input_tokens: int = 0) -> Script:
        """Send message_start and `after_deltas` text deltas, then nothing (the connection stays open)
        until the client goes away or `hold` seconds pass; then end the body without message_stop."""
        return cls("stall", reply=Reply.text(text, input_tokens=input_tokens), delay=hold,
                   after_deltas=after_deltas)

    @classmethod
    def held(cls, first: str, rest: str, release: threading.Event) -> Script:
        """Send `first`, set `reached`, then wait (connection open) until the test sets `release`; then
        send `rest` and end the message normally: an answer a test can act in the middle of."""
        return cls("held", reply=Reply.text(first + rest), first=first, release=release)



@dataclass
class FakeAnthropic:
    url: str = ""
    scripts: deque[Script | Callable[[dict[str, Any]], Script]] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)
    violations: list[list[str]] = field(default_factory=list)
    disconnected: threading.Event = field(default_factory=threading.Event)
    default: Script | None = None  # answers every request once the scripted ones are used up
    disconnects: int = 0  # requests the client abandoned before the answer was complete
    cache: PromptCache = field(default_factory=PromptCache)
    # Further rules a test adds, e.g. the subset a local model server implements (tests/fakes/local_server.py).
    strict: Callable[[dict[str, Any]], list[str]] | None = None

    def reset(self) -> None:
        self.scripts.clear()
        self.requests.clear()
        self.violations.clear()
        self.disconnected.clear()
        self.default = None
        self.disconnects = 0
        self.cache.reset()
        self.strict = None

    def script(self, *items: Script | Callable[[dict[str, Any]], Script]) -> None:
        self.scripts.extend(items)

    async def _messages(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        problems = validate_request(body) + (self.strict(body) if self.strict else [])
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
        if script.reply is not None and not script.reply.input_tokens:
            cached = self.cache.usage(body)  # what the prompt cache would read and write, as the API says
            script.reply.input_tokens = cached.input_tokens
            script.reply.cache_read_input_tokens = cached.cache_read_input_tokens
            script.reply.cache_creation_input_tokens = cached.cache_creation_input_tokens
            script.reply.output_tokens = script.reply.output_tokens or 12
        if script.kind == "http_error":
            error = error_body(script.error_type, script.message or f"scripted {script.error_type}")
            if script.error_code:
                error["error"]["details"] = {"error_code": script.error_code}
            headers = {} if script.should_retry is None else {"x-should-retry": str(script.should_retry).lower()}
            return JSONResponse(error, status_code=script.status, headers=headers)
        if not body.get("stream"):
            return StreamingResponse(self._message_json(script), media_type="application/json")
        return StreamingResponse(self._frames(script), media_type="text/event-stream")

    async def _message_json(self, script: Script) -> AsyncIterator[bytes]:
        reply = script.reply or Reply()
        try:
            deadline = time.monotonic() + (10 if script.kind == "slow" else script.delay)
            while time.monotonic() < deadline:
                yield b" "
                await asyncio.sleep(0.02)
            if script.kind == "slow":
                return
            yield json.dumps({
                "id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant",
                "model": "claude-fake", "content": reply.blocks, "stop_reason": reply.stop_reason,
                "stop_sequence": None, "usage": {"input_tokens": reply.input_tokens or 120,
                                                 "output_tokens": reply.output_tokens or 30}}).encode()
        except (asyncio.CancelledError, GeneratorExit):
            self._abandoned()
            raise

    def _abandoned(self) -> None:
        self.disconnected.set()
        self.disconnects += 1

    async def _frames(self, script: Script) -> AsyncIterator[bytes]:
        reply = script.reply or Reply()
        if script.kind == "stall" and script.after_deltas is None:
            async for chunk in self._silence(script.delay):
                yield chunk
            return
        yield message_start("claude-fake", reply)
        try:
            if script.kind == "stall":
                yield frame("content_block_start", {"type": "content_block_start", "index": 0,
                                                    "content_block": {"type": "text", "text": ""}})
                for piece in chunk_text(reply.blocks[0]["text"], 1)[:script.after_deltas]:
                    yield frame("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                        "delta": {"type": "text_delta", "text": piece}})
                async for chunk in self._silence(script.delay):
                    yield chunk
                return
            if script.kind == "held":
                assert script.release is not None
                text = reply.blocks[0]["text"]
                yield frame("content_block_start", {"type": "content_block_start", "index": 0,
                                                    "content_block": {"type": "text", "text": ""}})
                for piece in (text[:len(script.first)], text[len(script.first):]):
                    yield frame("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                        "delta": {"type": "text_delta", "text": piece}})
                    if not script.reached.is_set():
                        script.reached.set()
                        await asyncio.to_thread(script.release.wait, 30)
                yield frame("content_block_stop", {"type": "content_block_stop", "index": 0})
                for chunk in message_end(reply):
                    yield chunk
                return
            if script.kind == "slow":
                yield frame("content_block_start", {"type": "content_block_start", "index": 0,
                                                    "content_block": {"type": "text", "text": ""}})
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline:
                    yield frame("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
                        "type": "text_delta", "text": reply.blocks[0]["text"]}})
                    await asyncio.sleep(script.delay)
                return
            for index, block in enumerate(reply.blocks):
                if script.kind in ("stream_error", "drop") and index >= script.after_blocks:
                    break
                for chunk in block_frames(index, block):
                    yield chunk
                    if script.delay:
                        await asyncio.sleep(script.delay)
            if script.kind == "stream_error":
                yield frame("error", error_body(script.error_type, "Overloaded"))
                return
            if script.kind == "drop":
                raise ConnectionAbortedError("scripted drop")  # uvicorn cuts the chunked body
            if script.kind == "truncated":
                return
            for chunk in message_end(reply):
                yield chunk
        except asyncio.CancelledError:
            self._abandoned()
            raise


    async def _silence(self, seconds: float) -> AsyncIterator[bytes]:
        """Hold the response open without a byte for `seconds` (a client that hangs up ends it)."""
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            self._abandoned()
            raise
        return
        yield b""  # an async generator that yields nothing


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_fake_anthropic() -> tuple[FakeAnthropic, Callable[[], None]]:
    fake = FakeAnthropic()
    app = Starlette(routes=[Route("/v1/messages", fake._messages, methods=["POST"])])
    port = _free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    fake.url = f"http://127.0.0.1:{port}"

    def stop() -> None:
        server.should_exit = True
        thread.join(timeout=5)

    return fake, stop


def tool_reply(name: str, tool_input: dict[str, Any], preface: str = "Let me check.") -> Reply:
    return Reply.tool(name, tool_input, preface=preface)


def request_text(body: dict[str, Any]) -> str:
    """Everything a request said, flattened (for asserting what the model was told)."""
    return json.dumps(body, ensure_ascii=False)
