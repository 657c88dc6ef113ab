"""Benchmark (not a test): how much of each turn's prompt Claude's cache serves, and what that saves.

Drives a 10-turn Tablizer conversation through the app (page changes every turn, a tool call every
third turn) against the fake Messages API, which computes what the prompt cache would read and write
exactly as the API reports it. Prints, per model call, the input split (uncached / written / read) and
the cached share, then the conversation's estimated input cost with and without caching at Sonnet's list
prices (input $3, cache write $3.75, cache read $0.30 per million tokens).

    .venv/bin/python benchmarks/prompt_cache.py [--turns 10]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from starlette.testclient import TestClient

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.auth.service import ensure_user  # noqa: E402
from backend.config import Settings  # noqa: E402
from backend.db.migrate import upgrade  # noqa: E402
from backend.db.session import Database  # noqa: E402
from backend.main import create_app  # noqa: E402
from tests.fakes.anthropic_server import Script, start_fake_anthropic, tool_reply  # noqa: E402

PRICE = {"input": 3.00, "write": 3.75, "read": 0.30}  # USD per million tokens, Claude Sonnet


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=10)
    args = parser.parse_args()
    fake, stop = start_fake_anthropic()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/bench.db"
        upgrade(url)
        db = Database(url)
        with db.session() as s:
            ensure_user(s, "bench", "bench-pw", "user")
        app = create_app(Settings(DATABASE_URL=url, ANTHROPIC_API_KEY="bench", ANTHROPIC_BASE_URL=fake.url,
                                  COLLEAGUE_SOURCES="offline"))
        with TestClient(app) as client:
            client.post("/api/auth/login", json={"username": "bench", "password": "bench-pw"})
            conversation_id = None
            for turn in range(args.turns):
                if turn % 3 == 1:
                    fake.script(Script.answer(tool_reply("search_pubmed", {"query": f"EGFR resistance {turn}"})),
                                Script.text(f"Turn {turn}: the search above shows the main mechanisms."))
                else:
                    fake.script(Script.text(f"Turn {turn}: " + "a considered answer about resistance. " * 30))
                articles = [{"pmid": str(30000000 + turn * 100 + k), "title": f"Article {k} of query {turn}",
                             "journal": "J", "year": 2020} for k in range(20)]
                context = {"current_page": "tablizer", "query": f"EGFR resistance, refinement {turn}",
                           "articles": articles, "total_results": 200 + turn}
                body = {"message": f"Question {turn}", "context": context}
                if conversation_id:
                    body["conversation_id"] = conversation_id
                text = client.post("/api/chat/stream", json=body).text
                first = next(line for line in text.splitlines() if line.startswith("data: {\"conversation_id\""))
                conversation_id = json.loads(first[6:])["conversation_id"]
        db.dispose()
    stop()
    print(f"{'call':>4} {'uncached':>9} {'written':>8} {'read':>8} {'cached share':>13}")
    with_cache = without = 0.0
    for i in range(len(fake.requests)):
        u = fake.cache.log[i]
        total = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens
        print(f"{i + 1:>4} {u.input_tokens:>9} {u.cache_creation_input_tokens:>8} {u.cache_read_input_tokens:>8} "
              f"{u.cache_read_input_tokens / total:>12.0%}")
        with_cache += (u.input_tokens * PRICE["input"] + u.cache_creation_input_tokens * PRICE["write"]
                       + u.cache_read_input_tokens * PRICE["read"]) / 1e6
        without += total * PRICE["input"] / 1e6
    print(f"\n{len(fake.requests)} model calls over {args.turns} turns; input cost with caching ${with_cache:.4f}, "
          f"without ${without:.4f} ({1 - with_cache / without:.0%} saved)")


if __name__ == "__main__":
    main()
