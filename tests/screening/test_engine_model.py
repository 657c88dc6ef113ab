"""The engine with a model: the real SDK against the scripted fake Messages API on a socket. The fake
model answers each trial's criteria from the request it receives, so the tests check what was asked."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import pytest

from backend.criteria.labels import Verdict
from backend.demo.wire import Reply
from backend.screening import screen
from backend.screening.models import (
    MemoryJudgementCache,
    PatientInput,
    PatientProfile,
    ScreenRequest,
    TrialVerdict,
)
from backend.screening.prompts import JUDGE_TAG, read_trial_block
from backend.sources.models import TrialDetail
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.screening.trials import FakeTrials, trial

NOTE = "A 62-year-old woman with metastatic breast cancer. She had a stroke in 2019. ECOG 1."
PROFILE = PatientProfile(age=62, sex="female", conditions=["breast cancer"])
ELIGIBILITY = ("Inclusion Criteria:\n\n* Metastatic breast cancer\n* Age 18 or older\n\n"
               "Exclusion Criteria:\n\n* History of stroke\n* Pregnancy")


def _client(fake: FakeAnthropic) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key="test", base_url=fake.url, max_retries=0)


def _judge_body(body: dict[str, Any]) -> tuple[str, list[tuple[str, str, str]]]:
    text = "".join(b["text"] for b in body["messages"][0]["content"])
    found = read_trial_block(text)
    assert found is not None
    return found


def answering(answers: dict[str, str]) -> Any:
    """A scripted model: each criterion whose text contains a key gets that answer, the rest 'unknown'."""
    def script(body: dict[str, Any]) -> Script:
        _, items = _judge_body(body)
        entries = [{"id": cid, "answer": next((a for k, a in answers.items() if k in text), "unknown"),
                    "reasoning": "scripted", "evidence": [0]} for cid, _, text in items]
        return Script.answer(Reply.text(json.dumps({"criteria": entries})))
    return script


def patient(profile: PatientProfile | None = PROFILE) -> PatientInput:
    return PatientInput(note=NOTE, profile=profile, version="v1")


async def collect(gen: Any) -> list[Any]:
    return [event async for event in gen]


async def test_one_call_per_trial_with_the_note_as_a_cached_prefix(fake_llm: FakeAnthropic) -> None:
    fake_llm.default = Script.answer(Reply.text("{}"))
    fake_llm.scripts.clear()
    fake_llm.script(*[answering({"Metastatic": "yes", "Age": "yes", "stroke": "yes", "Pregnancy": "no"})] * 2)
    trials = FakeTrials([trial("NCT00000001", ELIGIBILITY), trial("NCT00000002", ELIGIBILITY)])
    cache = MemoryJudgementCache()
    async with _client(fake_llm) as client:
        events = await collect(screen(patient(), ScreenRequest(nct_ids=["NCT00000001", "NCT00000002"]), trials,
                                      client, "claude-sonnet-4-6", cache, concurrency=2))
    assert [e.type for e in events] == ["profile", "candidates", "trial", "trial", "done"]
    judge_calls = [b for b in fake_llm.requests if b["system"][0]["text"].startswith(JUDGE_TAG)]
    assert len(judge_calls) == 2  # all four criteria of a trial in one call
    for body in judge_calls:
        note_block, trial_block = body["messages"][0]["content"]
        assert note_block["cache_control"] == {"type": "ephemeral"} and "0. A 62-year-old woman" in note_block["text"]
        assert "cache_control" not in trial_block and "[exc-0] (exclusion) History of stroke" in trial_block["text"]
    screened = {e.trial.nct_id: e.trial for e in events if e.type == "trial"}
    one = screened["NCT00000001"]
    # yes to an exclusion = it applies = NOT_MET, so the patient is excluded
    labels = [(r.criterion.kind, r.criterion.index, r.label) for r in one.criteria]
    assert labels == [("inclusion", 0, Verdict.MET), ("inclusion", 1, Verdict.MET),
                      ("exclusion", 0, Verdict.NOT_MET), ("exclusion", 1, Verdict.MET)]
    assert one.verdict == TrialVerdict.EXCLUDED and (one.met, one.not_met, one.unknown) == (3, 1, 0)
    assert one.criteria[0].evidence == [0]
    done = events[-1]
    assert done.usage.model_calls == 2 and done.usage.estimated_cost_usd and done.usage.estimated_cost_usd > 0
    assert len(cache.items) == 8

    # A second screening of the same note version asks the model nothing: every judgement is cached.
    before = len(fake_llm.requests)
    async with _client(fake_llm) as client:
        again = await collect(screen(patient(), ScreenRequest(nct_ids=["NCT00000001"]), trials, client,
                                     "claude-sonnet-4-6", cache))
    assert len(fake_llm.requests) == before
    assert all(r.cached for r in again[2].trial.criteria) and again[2].trial.verdict == TrialVerdict.EXCLUDED
    # Another note version (an edited note or profile) is judged afresh.
    fake_llm.script(answering({}))
    async with _client(fake_llm) as client:
        other = await collect(screen(PatientInput(note=NOTE, profile=PROFILE, version="v2"),
                                     ScreenRequest(nct_ids=["NCT00000001"]), trials, client, "claude-sonnet-4-6",
                                     cache))
    assert len(fake_llm.requests) == before + 1 and not other[2].trial.criteria[0].cached


async def test_malformed_json_is_retried_once_then_unknown_with_the_reason(fake_llm: FakeAnthropic) -> None:
    fake_llm.script(Script.text("Sure! Here are my thoughts, no JSON."), Script.text('{"criteria": [oops'))
    trials = FakeTrials([trial("NCT00000001", ELIGIBILITY)])
    cache = MemoryJudgementCache()
    async with _client(fake_llm) as client:
        events = await collect(screen(patient(), ScreenRequest(nct_ids=["NCT00000001"]), trials, client,
                                      "claude-sonnet-4-6", cache))
    assert len(fake_llm.requests) == 2  # one retry
    t = events[2].trial
    assert all(r.label == Verdict.UNKNOWN and r.error for r in t.criteria)
    assert "retry" in t.criteria[0].reasoning and t.verdict == TrialVerdict.UNCERTAIN
    assert cache.items == {}  # an unusable reply is never cached


async def test_a_retry_asks_only_for_what_the_first_reply_left_out(fake_llm: FakeAnthropic) -> None:
    def partial(body: dict[str, Any]) -> Script:
        _, items = _judge_body(body)
        return Script.answer(Reply.text(json.dumps({"criteria": [
            {"id": items[0][0], "answer": "yes", "reasoning": "r", "evidence": []}]})))
    fake_llm.script(partial, answering({"": "no"}))
    trials = FakeTrials([trial("NCT00000001", ELIGIBILITY)])
    async with _client(fake_llm) as client:
        events = await collect(screen(patient(), ScreenRequest(nct_ids=["NCT00000001"]), trials, client,
                                      "claude-sonnet-4-6", MemoryJudgementCache()))
    second = _judge_body(fake_llm.requests[1])[1]
    assert [cid for cid, _, _ in second] == ["inc-1", "exc-0", "exc-1"]
    labels = [r.label for r in events[2].trial.criteria]
    assert labels == [Verdict.MET, Verdict.NOT_MET, Verdict.MET, Verdict.MET]


async def test_a_refused_key_is_a_fatal_error_event(fake_llm: FakeAnthropic) -> None:
    fake_llm.script(Script.http_error(401, "authentication_error", "invalid x-api-key"))
    trials = FakeTrials([trial("NCT00000001", ELIGIBILITY), trial("NCT00000002", ELIGIBILITY)])
    async with _client(fake_llm) as client:
        events = await collect(screen(patient(), ScreenRequest(nct_ids=["NCT00000001", "NCT00000002"]), trials,
                                      client, "claude-sonnet-4-6", MemoryJudgementCache(), concurrency=1))
    assert [e.type for e in events] == ["profile", "candidates", "error"]
    assert events[-1].fatal and events[-1].code == "model_refused" and "x-api-key" not in events[-1].message


async def test_an_overloaded_model_fails_one_trial_and_the_screening_goes_on(fake_llm: FakeAnthropic) -> None:
    fake_llm.script(Script.http_error(529, "overloaded_error"), answering({"": "no"}))
    trials = FakeTrials([trial("NCT00000001", ELIGIBILITY), trial("NCT00000002", ELIGIBILITY)])
    async with _client(fake_llm) as client:
        events = await collect(screen(patient(), ScreenRequest(nct_ids=["NCT00000001", "NCT00000002"]), trials,
                                      client, "claude-sonnet-4-6", MemoryJudgementCache(), concurrency=1))
    assert [e.type for e in events] == ["profile", "candidates", "error", "trial", "done"]
    assert events[2].nct_id == "NCT00000001" and not events[2].fatal and events[2].retryable
    assert events[-1].ranking == ["NCT00000002"]


async def test_trial_and_error_events_carry_the_usage_so_far(fake_llm: FakeAnthropic) -> None:
    def counted(body: dict[str, Any]) -> Script:
        script = answering({"": "no"})(body)
        assert script.reply is not None
        script.reply.input_tokens, script.reply.output_tokens = 300, 40
        return script

    fake_llm.script(counted, Script.http_error(529, "overloaded_error"), counted)
    trials = FakeTrials([trial(f"NCT0000000{i}", ELIGIBILITY) for i in range(1, 4)])
    async with _client(fake_llm) as client:
        events = await collect(screen(patient(), ScreenRequest(nct_ids=[t.nct_id for t in trials.items]), trials,
                                      client, "claude-sonnet-4-6", MemoryJudgementCache(), concurrency=1))
    assert [e.type for e in events] == ["profile", "candidates", "trial", "error", "trial", "done"]
    so_far = [(e.type, e.usage.model_calls, e.usage.input_tokens, e.usage.output_tokens) for e in events[2:]]
    assert so_far == [("trial", 1, 300, 40), ("error", 1, 300, 40), ("trial", 2, 600, 80), ("done", 2, 600, 80)]
    assert events[2].usage.estimated_cost_usd and events[2].usage.estimated_cost_usd > 0


async def test_stop_cancels_pending_model_calls(fake_llm: FakeAnthropic) -> None:
    fake_llm.default = Script.answer(Reply.text("{}"), delay=5)
    trials = FakeTrials([trial(f"NCT0000000{i}", ELIGIBILITY) for i in range(1, 4)])
    async with _client(fake_llm) as client:
        gen = screen(patient(), ScreenRequest(nct_ids=[t.nct_id for t in trials.items]), trials, client,
                     "claude-sonnet-4-6", MemoryJudgementCache(), concurrency=3)
        assert (await gen.__anext__()).type == "profile"
        assert (await gen.__anext__()).type == "candidates"
        waiting = asyncio.ensure_future(gen.__anext__())
        for _ in range(100):  # every call in flight (a fixed pause was too short on a loaded machine)
            if len(fake_llm.requests) >= 3:
                break
            await asyncio.sleep(0.05)
        assert len(fake_llm.requests) >= 3
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        await asyncio.wait_for(gen.aclose(), 2)
    for _ in range(50):
        if fake_llm.disconnects >= 3:
            break
        await asyncio.sleep(0.05)
    assert fake_llm.disconnects >= 3  # every in-flight call was abandoned, none left running


async def test_ingest_with_a_model_reads_its_json(fake_llm: FakeAnthropic) -> None:
    profile = {"age": 62, "sex": "female", "conditions": ["breast cancer"], "keywords": ["HER2 breast cancer"],
               "key_facts": {"prior_therapies": ["trastuzumab"], "biomarkers": ["HER2-positive"]}}
    fake_llm.script(Script.text(json.dumps(profile)))
    trials = FakeTrials([TrialDetail(nct_id="NCT00000009", title="No criteria")])
    async with _client(fake_llm) as client:
        events = await collect(screen(patient(profile=None), ScreenRequest(nct_ids=["NCT00000009"]), trials,
                                      client, "claude-sonnet-4-6", MemoryJudgementCache()))
    first = events[0]
    assert first.extracted and first.profile.key_facts.prior_therapies == ["trastuzumab"]
    assert first.profile.conditions == ["breast cancer"] and first.profile.age == 62
    assert events[2].trial.verdict == TrialVerdict.UNCERTAIN and "no eligibility criteria" in events[2].trial.reason
