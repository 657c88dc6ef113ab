"""Notes kept on the premises: with `COLLEAGUE_MODEL_SERVER=local` every request the product sends (the
profile's INGEST, the judge, a chat turn with a tool call and a turn told to answer without tools) is
inside the Messages API subset Ollama and llama.cpp's server implement, checked by a strict fake server
through the real SDK. Without the setting the same flow sends what they lack (prompt caching)."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from backend.db.session import Database
from backend.main import create_app
from tests.conftest import make_settings, signed_in
from tests.fakes.anthropic_server import FakeAnthropic, Script, tool_reply
from tests.fakes.local_server import local_subset_problems
from tests.screening_api.conftest import TRIALS, ScriptedModel
from tests.screening_chat.conftest import ask, context, screened


def _client(db_url: str, db: Database, fake: FakeAnthropic, **settings: Any) -> TestClient:
    app = create_app(make_settings(db_url, ANTHROPIC_API_KEY="local-key-ignored", ANTHROPIC_BASE_URL=fake.url,
                                   **settings))
    app.state.chat.limits.max_iterations = 2  # the second model call of a turn is told to answer, no tools
    return signed_in(app, db, "alice")


def _flow(client: TestClient, fake: FakeAnthropic) -> dict[str, Any]:
    done = screened(client, TRIALS)
    nct = done.shortlist[0]["nct_id"]
    fake.script(Script.answer(tool_reply("get_screening_trial", {"nct_id": nct})),
                Script.text(f"{nct} is uncertain: the note does not say enough."))
    turn = ask(client, f"Why is {nct} not eligible?", context(done))
    assert turn.tools == ["get_screening_trial"]
    assert nct in turn.text
    return turn.complete


def test_local_server_gets_only_the_subset_it_implements(db_url: str, db: Database, fake_llm: FakeAnthropic,
                                                         model: ScriptedModel) -> None:
    fake_llm.strict = local_subset_problems  # anything outside the subset is a 400 and a recorded violation
    client = _client(db_url, db, fake_llm, COLLEAGUE_MODEL_SERVER="local")
    try:
        _flow(client, fake_llm)
    finally:
        client.__exit__(None, None, None)
    assert fake_llm.requests and not any(local_subset_problems(b) for b in fake_llm.requests)
    chat = [b for b in fake_llm.requests if any(t.get("name") == "get_screening_trial" for t in b.get("tools", []))]
    assert chat, "the first chat request offers the screening tools"
    last = fake_llm.requests[-1]  # the turn's last call: told to answer, so its tools are left out
    assert "tools" not in last and "tool_choice" not in last
    assert any(b.get("type") == "tool_result" for m in last["messages"] for b in m["content"]
               if isinstance(m["content"], list))
    assert model.judged, "the screening's judge calls went through the same subset"


def test_the_default_uses_prompt_caching_a_local_server_lacks(db_url: str, db: Database, fake_llm: FakeAnthropic,
                                                              model: ScriptedModel) -> None:
    client = _client(db_url, db, fake_llm)
    try:
        _flow(client, fake_llm)
    finally:
        client.__exit__(None, None, None)
    problems = [p for b in fake_llm.requests for p in local_subset_problems(b)]
    assert any("cache_control" in p for p in problems)
    assert any("tool_choice" in p for p in problems)


@pytest.mark.parametrize("choice", [{"type": "none"}, {"type": "auto"}])
def test_subset_keeps_the_prompt(choice: dict[str, str]) -> None:
    from backend.agent.local_server import subset

    body = {"model": "m", "max_tokens": 10, "metadata": {"user_id": "u"}, "tool_choice": choice,
            "system": [{"type": "text", "text": "S", "cache_control": {"type": "ephemeral"}}],
            "tools": [{"name": "t", "description": "d", "input_schema": {"type": "object"}}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Q",
                                                       "cache_control": {"type": "ephemeral"}}]}]}
    out = subset(body)
    assert out["system"] == [{"type": "text", "text": "S"}]
    assert out["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Q"}]}]
    assert ("tools" in out) == (choice["type"] != "none")
    assert not local_subset_problems(out)
