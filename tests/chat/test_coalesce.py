"""Coalesced frames: text deltas that come faster than the window go out as one `text_delta`, numbered
and stored as such, so a live reader, a resumed one and the stored events agree; the first delta is never
held; anything else, the end and Stop send the held text first."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from starlette.testclient import TestClient

from backend.agent.schemas import TextDelta
from backend.chat.coalesce import Coalescer
from backend.config import Settings
from backend.demo.wire import chunk_text
from tests.conftest import make_settings
from tests.fakes.anthropic_server import FakeAnthropic, Script, tool_reply
from tests.fakes.fake_page import CONTEXT, chat
from tests.sse import Event, parse, parse_lines, stream_acting_midway, text_of

WINDOW_MS = 200  # wide, so that a burst from the fake server is one window even on a loaded machine
ANSWER = ("Both trials enrol adults with metastatic disease after one prior line of therapy; the first "
          "excludes brain metastases and the second allows them when they are treated and stable.")


@pytest.fixture
def settings(db_url: str, fake_llm: FakeAnthropic) -> Settings:
    return make_settings(db_url, ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=fake_llm.url,
                         COLLEAGUE_COALESCE_MS=WINDOW_MS)


def numbered(events: list[Event]) -> list[int]:
    ids = [int(e.id) for e in events if e.id is not None]
    assert len(ids) == len(events)
    return ids


async def test_a_delta_after_quiet_goes_at_once_and_a_burst_waits_for_the_window() -> None:
    sent: list[str] = []
    flushed = asyncio.Event()

    def emit(delta: TextDelta) -> None:
        sent.append(delta.text)
        if len(sent) == 2:
            flushed.set()

    text = Coalescer(0.01, emit)
    text.add(TextDelta(text="a"))
    assert sent == ["a"]  # nothing before it: not held
    text.add(TextDelta(text="b"))
    text.add(TextDelta(text="c"))
    assert sent == ["a"]
    await asyncio.wait_for(flushed.wait(), 5)  # the window's timer sends them, with nothing else to nudge it
    assert sent == ["a", "bc"]
    text.add(TextDelta(text="d"))
    text.flush()  # as before a tool event, at the end or on Stop
    assert sent == ["a", "bc", "d"]

    off = Coalescer(0.0, lambda d: sent.append(d.text))
    for piece in "xyz":
        off.add(TextDelta(text=piece))
    assert sent[-3:] == ["x", "y", "z"]


def test_a_burst_is_one_frame_after_the_first_and_a_resume_reads_the_same(
        alice: TestClient, fake_llm: FakeAnthropic) -> None:
    upstream = chunk_text(ANSWER)
    assert len(upstream) > 5
    fake_llm.script(Script.text(ANSWER))
    events = chat(alice, "how do they differ?")
    assert numbered(events) == list(range(1, len(events) + 1))
    deltas = [e for e in events if e.event == "text_delta"]
    assert deltas[0].data["text"] == upstream[0]  # the first token is not held for the window
    assert len(deltas) < len(upstream)
    assert text_of(events) == ANSWER == events[-1].data["payload"]["message"]

    cid, first = events[0].data["conversation_id"], int(deltas[0].id or 0)
    url = f"/api/conversations/{cid}/stream"
    rest = parse(alice.get(url, headers={"Last-Event-ID": str(first)}).text)  # the stored events
    assert [(e.id, e.event, e.data) for e in rest] == [(e.id, e.event, e.data) for e in events[first:]]
    assert deltas[0].data["text"] + text_of(rest) == ANSWER


@pytest.mark.usefixtures("test_registry")
def test_held_text_goes_out_before_a_tool_starts(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    preface = "Let me look that up in the staged list of trials before answering your question."
    fake_llm.script(Script.answer(tool_reply("lookup", {"q": "egfr"}, preface=preface)),
                    Script.text("Two of them match."))
    events = chat(alice, "which match?")
    assert numbered(events) == list(range(1, len(events) + 1))
    start = next(i for i, e in enumerate(events) if e.event == "tool_start")
    assert text_of(events[:start]) == preface
    assert text_of(events[start:]).lstrip() == "Two of them match."  # (after the blank line between calls)
    done = events[-1].data["payload"]
    assert done["tool_history"][0]["at"] == len(preface)  # where the reader's text stood when the tool began


def test_stop_sends_the_held_text_and_a_reader_resuming_midway_reads_what_the_live_one_does(
        alice: TestClient, fake_llm: FakeAnthropic) -> None:
    fake_llm.script(Script.slow("Partial. ", delay=0.005))  # far faster than the window: most text is held
    resumed: list[Event] = []

    def resume_then_stop(cid: int) -> None:
        with alice.stream("GET", f"/api/conversations/{cid}/stream", headers={"Last-Event-ID": "2"}) as r:
            for event in parse_lines(r.iter_lines()):
                resumed.append(event)
                if sum(e.event == "text_delta" for e in resumed) == 2:
                    assert alice.post(f"/api/conversations/{cid}/stop").json() == {"stopped": True}

    events, _ = stream_acting_midway(alice, {"message": "go on", "context": CONTEXT}, resume_then_stop)
    assert numbered(events) == list(range(1, len(events) + 1))
    done = events[-1]
    assert done.event == "complete" and done.data["payload"]["status"] == "interrupted"
    said: Any = done.data["payload"]["message"]
    assert said.count("Partial.") > len([e for e in events if e.event == "text_delta"])  # it did coalesce
    assert text_of(events).strip() == said  # nothing the model sent was left in the window
    assert [(e.id, e.event, e.data) for e in resumed] == [(e.id, e.event, e.data) for e in events[2:]]
