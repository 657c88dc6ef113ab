"""`/metrics` under `python -m backend serve --workers 2`: one scrape, answered by either worker, counts
every request and turn both workers served (prometheus_client's multi-process mode)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from backend.db.session import Database
from tests.conftest import add_user
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.live_server import LiveServer, login
from tests.sse import parse_lines

TOKEN = "scrape-me"


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    r = httpx.get(f"{url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
    assert r.status_code == 200, r.text
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(r.text) for s in family.samples}


def test_metrics_add_up_across_two_workers(tmp_path: Path, fake_llm: FakeAnthropic,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLLEAGUE_METRICS_TOKEN", TOKEN)
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)
    fake_llm.default = Script.text("A short answer.")
    url = f"sqlite:///{tmp_path / 'colleague.db'}"
    server = LiveServer(url, fake_llm.url, tmp_path / "server.log", "--workers", "2")
    server.start()  # one GET /api/health that answered 200
    try:
        db = Database(url)
        add_user(db, "alice")
        db.dispose()
        assert httpx.get(f"{server.url}/metrics").status_code == 401  # no token: nothing to read
        health = 20
        for _ in range(health):  # a new connection each: the workers take turns accepting them
            assert httpx.get(f"{server.url}/api/health", timeout=10).status_code == 200
        turns = 4
        client = login(server.url, "alice")
        for n in range(turns):
            with client.stream("POST", "/api/chat/stream", json={"message": f"question {n}",
                                                                 "context": {"current_page": "tablizer"}}) as r:
                assert r.status_code == 200
                events = list(parse_lines(r.iter_lines()))
            assert events[-1].event == "complete", events[-1]
        client.close()

        samples = scrape(server.url)
        assert samples[("colleague_workers", ())] == 2  # both workers' values are in the one scrape
        assert samples[("colleague_http_requests_total",
                        (("method", "GET"), ("route", "/api/health"), ("status", "200")))] == health + 1
        assert samples[("colleague_http_requests_total",
                        (("method", "POST"), ("route", "/api/chat/stream"), ("status", "200")))] == turns
        assert samples[("colleague_http_requests_total",
                        (("method", "GET"), ("route", "/metrics"), ("status", "401")))] == 1
        assert samples[("colleague_turns_started_total", ())] == turns
        assert samples[("colleague_turns_ended_total", (("error", ""), ("outcome", "completed")))] == turns
        assert samples[("colleague_turn_duration_seconds_count", (("outcome", "completed"),))] == turns
        assert samples[("colleague_turn_time_to_first_chunk_seconds_count", ())] == turns
        model = fake_llm.requests[-1]["model"]
        assert samples[("colleague_model_call_duration_seconds_count",
                        (("model", model), ("outcome", "ok")))] == turns
        assert samples[("colleague_model_tokens_total", (("model", model), ("type", "output")))] == 12 * turns
        assert samples[("colleague_turns_running", ())] == 0
        assert samples[("colleague_stream_readers", (("where", "local"),))] == 0
    finally:
        server.terminate()
