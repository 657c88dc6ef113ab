"""The SSE transcript shared with the frontend's decoder tests (tests/fixtures/sse/chat_turn.sse).

A real turn through the endpoint, normalised (random ids replaced, one heartbeat comment added, since a
fast turn sends none) must equal the committed file. Regenerate with COLLEAGUE_UPDATE_FIXTURES=1.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tests.fakes.anthropic_server import FakeAnthropic, Script, tool_reply
from tests.sse import parse

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "sse" / "chat_turn.sse"
CONTEXT = {"current_page": "trialscout", "condition": "non-small cell lung cancer", "phase": ["PHASE3"],
           "status": [], "trials": [], "total_matched": 0, "loaded_count": 0, "ai_columns": []}


SEARCH = {"condition": "non-small cell lung cancer", "phase": ["PHASE3"], "status": [], "page_size": 2}


def normalise(body: str) -> str:
    body = re.sub(r'"turn_id": "[0-9a-f]{32}"', '"turn_id": "t-1"', body)
    ids: dict[str, str] = {}
    body = re.sub(r'"id": "([0-9a-f]{16})"', lambda m: f'"id": "p-{ids.setdefault(m.group(1), str(len(ids) + 1))}"',
                  body)
    frames = body.replace("\r\n", "\n").split("\n\n")
    frames.insert(2, ": ping - heartbeat comment")  # what sse-starlette sends while a turn is quiet
    return "\r\n".join("\n\n".join(frames).split("\n"))


def test_transcript_matches_a_real_turn(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    fake_llm.script(
        Script.answer(tool_reply("search_trials", SEARCH, preface="Let me look for Phase 3 trials.")),
        Script.text('Two of the Phase 3 NSCLC trials are listed below.\n\nTRIAL_SEARCH: {"condition": '
                    '"non-small cell lung cancer", "phase": ["PHASE3"], "status": ["RECRUITING"], "explanation": '
                    '"Recruiting Phase 3 NSCLC trials"}\n\nSUGGESTED_VALUES: [{"label": "Most common phase?", '
                    '"value": "What is the most common phase among these?"}]'))
    r = alice.post("/api/chat/stream", json={"message": "Phase 3 NSCLC trials?", "context": CONTEXT})
    actual = normalise(r.text)
    kinds = [e.event for e in parse(actual)]
    assert kinds[0] == "conversation" and kinds[-1] == "complete" and "tool_progress" in kinds
    if os.environ.get("COLLEAGUE_UPDATE_FIXTURES"):
        FIXTURE.write_bytes(actual.encode())
        pytest.skip("fixture regenerated")
    assert actual == FIXTURE.read_bytes().decode(), "regenerate with COLLEAGUE_UPDATE_FIXTURES=1 if intended"
