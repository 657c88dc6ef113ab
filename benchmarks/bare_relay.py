"""The floor for Colleague's stream path: the same `anthropic` SDK and sse-starlette relaying a model, with
nothing else (no auth, no database, no registry, no event log). `benchmarks/relay_vs_colleague.py` runs it
beside Colleague against one stub model; every change to the stream path is judged against it.

    .venv/bin/python benchmarks/bare_relay.py --port 8100 --model-url http://127.0.0.1:8200
    POST /relay {"message": "…"}  →  text_delta frames ({"text": …}), then one `complete`
"""

from __future__ import annotations

import argparse
import json
from collections.abc import AsyncIterator
from typing import Any

import anthropic
import uvicorn
from fastapi import FastAPI
from sse_starlette import EventSourceResponse, ServerSentEvent


def make_app(model_url: str) -> FastAPI:
    client = anthropic.AsyncAnthropic(api_key="bench", base_url=model_url, max_retries=0)
    app = FastAPI()

    @app.post("/relay")
    async def relay(body: dict[str, Any]) -> EventSourceResponse:
        async def events() -> AsyncIterator[ServerSentEvent]:
            n = 0
            # The SDK's raw events, as Colleague's agent loop reads them (not the `messages.stream()`
            # helper, which rebuilds the whole message on every event): the same call on both sides.
            message = {"role": "user", "content": str(body.get("message", "hi"))}
            stream = await client.messages.create(model="claude-sonnet-4-6", max_tokens=1024, stream=True,
                                                  messages=[message])
            async with stream:
                async for event in stream:
                    if event.type == "content_block_delta" and event.delta.type == "text_delta":
                        n += 1
                        yield ServerSentEvent(id=str(n), event="text_delta",
                                              data=json.dumps({"text": event.delta.text, "type": "text_delta"}))
            yield ServerSentEvent(id=str(n + 1), event="complete", data='{"type": "complete"}')

        return EventSourceResponse(events(), ping=10, send_timeout=30,
                                   headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8100)
    parser.add_argument("--model-url", required=True)
    args = parser.parse_args()
    uvicorn.run(make_app(args.model_url), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
