"""Screening offline with the demo model (no key): the SDK path answered by the app's demo transport, over
the embedded trial corpus; and the prescreen's guarantees (budget, past therapies, merging)."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import pytest

from backend.criteria.labels import Verdict
from backend.demo.transport import DEMO_MODEL_ID
from backend.demo.wire import Reply
from backend.screening import extract_profile, screen
from backend.screening.models import (
    MemoryJudgementCache,
    PatientInput,
    PatientProfile,
    ScreenRequest,
    TrialVerdict,
    note_version,
)
from backend.screening.prescreen import budget_error
from backend.sources.offline import OfflineClinicalTrialsService
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.screening.trials import FakeTrials, trial

NOTE = ("A 62-year-old woman with HER2-positive metastatic breast cancer, progressed after trastuzumab. "
        "ECOG 1. She denies heart failure. No history of brain metastases.")


async def collect(gen: Any) -> list[Any]:
    return [event async for event in gen]


async def test_ingest_offline_reads_age_sex_conditions_and_past_therapy(demo_client: Any) -> None:
    local, usage = await extract_profile(NOTE)
    assert usage.model_calls == 0
    via_sdk, sdk_usage = await extract_profile(NOTE, demo_client, DEMO_MODEL_ID)
    assert via_sdk == local and sdk_usage.model_calls == 1  # one path: the demo answers the INGEST request
    assert (local.age, local.sex) == (62, "female")
    assert local.conditions[0] == "breast cancer"
    assert local.key_facts.stage == "metastatic" and local.key_facts.biomarkers == ["HER2-positive"]
    assert local.key_facts.prior_therapies == ["trastuzumab"]
    assert "trastuzumab" not in " ".join(local.keywords).lower()


async def test_search_mode_end_to_end_offline(demo_client: Any) -> None:
    trials = OfflineClinicalTrialsService()
    events = await collect(screen(PatientInput(note=NOTE, version=note_version(NOTE)), ScreenRequest(n=5), trials,
                                  demo_client, DEMO_MODEL_ID, MemoryJudgementCache()))
    kinds = [e.type for e in events]
    assert kinds[:2] == ["profile", "candidates"] and kinds[-1] == "done"
    candidates = events[1]
    assert candidates.mode == "search" and 1 <= len(candidates.candidates) <= 5
    assert candidates.tool_calls and all(r.tool_name == "search_trials" and r.error is None
                                         for r in candidates.tool_calls)
    for record in candidates.tool_calls:  # the patient's age and sex filter every search
        assert record.args["min_age"] == record.args["max_age"] == 62 and record.args["sex"] == "FEMALE"
        assert "trastuzumab" not in json.dumps(record.args).lower()
    assert all(c.found_by_queries and c.heuristic_score >= 3 for c in candidates.candidates)
    trials_seen = [e.trial for e in events if e.type == "trial"]
    assert len(trials_seen) == len(candidates.candidates) and [e.done for e in events if e.type == "trial"] == list(
        range(1, len(trials_seen) + 1))
    assert sorted(events[-1].ranking) == sorted(t.nct_id for t in trials_seen)
    scores = {t.nct_id: t.score for t in trials_seen}
    assert [scores[n] for n in events[-1].ranking] == sorted(scores.values(), reverse=True)
    judged = [r for t in trials_seen for r in t.criteria]
    assert judged and all(t.snapshot_date for t in trials_seen)
    # the demo decides from the note's text: an exclusion applies only with a sentence of the note behind it
    exclusions = [r for r in judged if r.criterion.kind == "exclusion"]
    assert exclusions and all(r.evidence for r in exclusions if r.label == Verdict.NOT_MET)
    assert sum(r.label == Verdict.MET for r in exclusions) > len(exclusions) / 2


async def test_nct_list_mode_reports_missing_trials_and_records_without_criteria(demo_client: Any) -> None:
    note = "0. A 45-year-old man with type 2 diabetes.\n1. He denies smoking.\n2. No history of stroke."
    eligibility = ("Inclusion Criteria:\n\n* Type 2 diabetes\n* Age 18 to 75 years\n* Female\n\n"
                   "Exclusion Criteria:\n\n* Current smoker\n* History of stroke\n* Chronic kidney disease")
    trials = FakeTrials([trial("NCT00000001", eligibility, title="Diabetes trial", conditions=["Type 2 Diabetes"]),
                         trial("NCT00000002", None, title="Diabetes registry", conditions=["Type 2 Diabetes"])])
    events = await collect(screen(PatientInput(note=note, version="v1"),
                                  ScreenRequest(nct_ids=["nct00000001", "NCT00000002", "NCT09999999"]), trials,
                                  demo_client, DEMO_MODEL_ID, MemoryJudgementCache()))
    candidates = events[1]
    assert candidates.mode == "nct_ids" and candidates.missing == ["NCT09999999"]
    screened = {e.trial.nct_id: e.trial for e in events if e.type == "trial"}
    labels = {r.criterion.text: r.label for r in screened["NCT00000001"].criteria}
    assert labels == {"Type 2 diabetes": Verdict.MET, "Age 18 to 75 years": Verdict.MET,
                      "Female": Verdict.NOT_MET,  # a man
                      "Current smoker": Verdict.MET,  # denies smoking: not excluded
                      "History of stroke": Verdict.MET,  # "no history of stroke"
                      "Chronic kidney disease": Verdict.MET}  # not shown by the note: does not apply
    assert screened["NCT00000001"].verdict == TrialVerdict.EXCLUDED
    empty = screened["NCT00000002"]
    assert empty.verdict == TrialVerdict.UNCERTAIN and empty.reason and empty.criteria == []


async def test_a_source_outage_is_an_error_event(demo_client: Any) -> None:
    trials = FakeTrials([], down=True)
    events = await collect(screen(PatientInput(note=NOTE, version="v1"), ScreenRequest(nct_ids=["NCT00000001"]),
                                  trials, demo_client, DEMO_MODEL_ID, MemoryJudgementCache()))
    assert [e.type for e in events] == ["profile", "error"]
    assert events[-1].code == "source_unavailable" and events[-1].retryable and events[-1].fatal


def _tool_use(name: str, tool_input: dict[str, Any]) -> Script:
    return Script.answer(Reply.tool(name, tool_input))


async def test_prescreen_budget_guard_past_therapy_and_merge(fake_llm: FakeAnthropic) -> None:
    """A model that keeps searching: its calls beyond the budget get the budget error, a search for her
    past drug loses its intervention, and trials found twice are one candidate found by two queries."""
    fake_llm.script(_tool_use("search_trials", {"condition": "breast cancer", "intervention": "Trastuzumab"}),
                    _tool_use("search_trials", {"condition": "breast"}),
                    _tool_use("search_trials", {"condition": "lung"}),
                    _tool_use("search_trials", {"condition": "breast cancer"}),
                    Script.text("Done: searched breast cancer trials."))
    trials = FakeTrials([trial("NCT00000001", None), trial("NCT00000002", None, title="Breast study"),
                         trial("NCT00000003", None, title="Lung study", conditions=["Lung Cancer"])])
    profile = PatientProfile(age=62, sex="female", conditions=["breast cancer"])
    profile = profile.model_copy(update={"key_facts": profile.key_facts.model_copy(
        update={"prior_therapies": ["trastuzumab"]})})
    async with anthropic.AsyncAnthropic(api_key="t", base_url=fake_llm.url, max_retries=0) as client:
        events = await collect(screen(PatientInput(note=NOTE, profile=profile, version="v1"),
                                      ScreenRequest(n=2, max_tool_calls=3), trials, client, "claude-sonnet-4-6",
                                      MemoryJudgementCache()))
    candidates = events[1]
    records = candidates.tool_calls
    assert [r.call_index for r in records] == [0, 1, 2]  # the fourth call was refused, not run
    assert "intervention" not in records[0].args and "dropped" in records[0].result_summary
    assert trials.searches[0].intervention is None
    fourth_reply = fake_llm.requests[4]["messages"][-1]["content"][0]
    assert fourth_reply["is_error"] and fourth_reply["content"] == budget_error(3)
    by_id = {c.nct_id: c for c in candidates.candidates}
    assert list(by_id) == ["NCT00000001", "NCT00000002"]  # pruned to n=2, the lung trial scored lowest
    assert by_id["NCT00000001"].found_by_queries == ["condition=breast cancer; status=RECRUITING,NOT_YET_RECRUITING",
                                                     "condition=breast; status=RECRUITING,NOT_YET_RECRUITING"]
    assert by_id["NCT00000001"].heuristic_score == 2 * 3 + 1.5 + 1  # two queries, phase 2, recruiting


class _BrokenCache:
    """A cache whose database fails with a message quoting what it was given (as drivers do)."""

    async def get(self, keys: Any) -> Any:
        raise RuntimeError(f"cannot read {NOTE}")

    async def put(self, items: Any) -> None:
        raise RuntimeError(f"cannot write {[j.reasoning for _, j in items]} {NOTE}")


async def test_a_failing_cache_costs_nothing_but_speed_and_logs_no_note_text(
        demo_client: Any, caplog: pytest.LogCaptureFixture) -> None:
    eligibility = "Inclusion Criteria:\n\n* Breast cancer\n\nExclusion Criteria:\n\n* Heart failure"
    trials = FakeTrials([trial("NCT00000001", eligibility)])
    with caplog.at_level("DEBUG", logger="backend"):  # (the SDK's own DEBUG log shows bodies: not ours)
        events = await collect(screen(PatientInput(note=NOTE, version="v1"), ScreenRequest(nct_ids=["NCT00000001"]),
                                      trials, demo_client, DEMO_MODEL_ID, _BrokenCache()))
    assert [e.type for e in events] == ["profile", "candidates", "trial", "done"]
    assert [r.label for r in events[2].trial.criteria] == [Verdict.MET, Verdict.MET]  # "denies heart failure"
    assert "cache" in caplog.text and "woman" not in caplog.text and "trastuzumab" not in caplog.text


async def test_registered_age_and_sex_limits_are_checked_even_without_eligibility_text(demo_client: Any) -> None:
    note = "0. A 45-year-old woman with asthma."
    old_only = trial("NCT00000001", None, title="Asthma in older adults", conditions=["Asthma"]).model_copy(
        update={"minimum_age": "65 Years", "sex": "ALL"})
    open_to_her = trial("NCT00000002", "Inclusion Criteria:\n\n* Asthma", title="Asthma trial",
                        conditions=["Asthma"]).model_copy(update={"minimum_age": "18 Years", "maximum_age": "70 Years",
                                                                  "sex": "FEMALE"})
    events = await collect(screen(PatientInput(note=note, version="v1"),
                                  ScreenRequest(nct_ids=["NCT00000001", "NCT00000002"]),
                                  FakeTrials([old_only, open_to_her]), demo_client, DEMO_MODEL_ID,
                                  MemoryJudgementCache()))
    screened = {e.trial.nct_id: e.trial for e in events if e.type == "trial"}
    old = screened["NCT00000001"]
    assert [(c.criterion.text, c.label) for c in old.criteria] == [
        ("Age 65 years or older (registered minimum age)", Verdict.NOT_MET)]
    assert old.verdict == TrialVerdict.EXCLUDED and old.reason  # and it says the text was missing
    fits = screened["NCT00000002"]
    assert [(c.criterion.index, c.criterion.text, c.label) for c in fits.criteria] == [
        (0, "Asthma", Verdict.MET), (1, "Age 18 years to 70 years (registered age limits)", Verdict.MET),
        (2, "Female (registered sex)", Verdict.MET)]
    assert fits.verdict == TrialVerdict.ELIGIBLE and fits.reason is None
    assert events[-1].ranking == ["NCT00000002", "NCT00000001"]
