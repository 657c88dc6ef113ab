"""Coalesced frames: text deltas that come faster than the window go out as one `text_delta`, numbered
and stored as such, so a live reader, a resumed one and the stored events agree; the first delta is never
held; anything else, the end and Stop send the held text first; the window follows the worker's load."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest
from starlette.testclient import TestClient

from backend.agent.llm import LLM
from backend.agent.schemas import TextDelta
from backend.agent.state import LoopLimits
from backend.chat.coalesce import Coalescer
from backend.chat.supervisor import Supervisor
from backend.config import Settings
from backend.demo.wire import chunk_text
from backend.main import create_app
from tests.conftest import make_settings, signed_in
from tests.fakes.anthropic_server import FakeAnthropic, Script, tool_reply
from tests.fakes.fake_page import CONTEXT, chat
from tests.sse import Event, parse, parse_lines, stream_acting_midway, text_of

WINDOW_MS = 200  # wide, so that a burst from the fake server is one window even on a loaded machine
ANSWER = ("Both trials enrol adults with metastatic disease after one prior line of therapy; the first "
          "excludes brain metastases and the second allows them when they are treated and stable.")


@pytest.fixture
def settings(db_url: str, fake_llm: FakeAnthropic) -> Settings:
    # The whole window for a turn alone: these tests are about what a held delta does.
    return make_settings(db_url, ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=fake_llm.url,
                         COLLEAGUE_COALESCE_MS=WINDOW_MS, COLLEAGUE_COALESCE_BUSY_TURNS=0)


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


async def test_the_window_follows_the_load() -> None:
    sent: list[str] = []
    load = 0.0
    text = Coalescer(10.0, lambda d: sent.append(d.text), lambda: load)
    for piece in "abc":
        text.add(TextDelta(text=piece))
    assert sent == ["a", "b", "c"]  # idle: nothing held, however close together
    load = 0.5
    text.add(TextDelta(text="d"))  # half of ten seconds since "c": held
    assert sent == ["a", "b", "c"]
    text.flush()
    assert sent == ["a", "b", "c", "d"]


def test_a_worker_is_as_busy_as_the_turns_running_beside_one(db: Any) -> None:
    supervisor = Supervisor(db, cast(LLM, None), None, LoopLimits())
    supervisor.busy_at = 50
    for running, load in ((0, 0.0), (1, 0.0), (26, 0.5), (51, 1.0), (400, 1.0)):
        supervisor.runners = dict.fromkeys(range(running))  # type: ignore[assignment]
        assert supervisor.load() == load
    supervisor.busy_at = 0  # the whole window always
    assert supervisor.load() == 1.0


def test_an_idle_worker_sends_each_delta_as_it_comes(db_url: str, db: Any, fake_llm: FakeAnthropic) -> None:
    app = create_app(make_settings(db_url, ANTHROPIC_API_KEY="test", ANTHROPIC_BASE_URL=fake_llm.url,
                                   COLLEAGUE_COALESCE_MS=WINDOW_MS))  # a turn alone on its worker
    client = signed_in(app, db, "carol")
    try:
        upstream = chunk_text(ANSWER)
        fake_llm.script(Script.text(ANSWER))
        events = chat(client, "how do they differ?")
        assert [e.data["text"] for e in events if e.event == "text_delta"] == upstream
    finally:
        client.__exit__(None, None, None)


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
