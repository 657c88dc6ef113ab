"""CT.gov record parsing over the whole corpus, and the rate limiter on its own."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from backend.sources.ctgov_records import age_in_years, parse_study, study_nct_id
from backend.sources.models import TrialSearchParams, normalize_nct_id
from backend.sources.offline.corpus import iter_study_records
from backend.sources.throttle import RateLimiter, retry_after_seconds

from .fakes import FakeTime, recorded


def test_every_corpus_study_parses() -> None:
    records = list(iter_study_records())
    assert len(records) == 375
    for study in records:
        trial = parse_study(study)
        assert re.fullmatch(r"NCT\d{8}", trial.nct_id) and trial.title and trial.status
        assert trial.eligibility_criteria
        assert trial.locations_count == len(trial.locations)
        assert trial.to_summary().model_dump() == {k: v for k, v in trial.model_dump().items()
                                                   if k in type(trial.to_summary()).model_fields}


@pytest.mark.parametrize("name", ["age_count", "keytruda_limit3", "melanoma_recruiting_limit3",
                                  "nsclc_egfr_l858r", "phelan_limit5", "phelan_next", "phelan_limit50"])
def test_projected_search_bodies_parse(name: str) -> None:
    for study in recorded(f"ctgov/biomcp_search_{name}_20260811.json")["studies"]:
        trial = parse_study(study)
        assert trial.nct_id == study_nct_id(study) and trial.title
        assert trial.arms == [] and trial.locations == []


def test_a_record_without_modules_still_parses() -> None:
    trial = parse_study({"protocolSection": {"identificationModule": {"nctId": "NCT00000102"}}})
    assert (trial.title, trial.phase, trial.status, trial.enrollment) == ("NCT00000102", [], None, None)
    with pytest.raises(ValueError, match="nctId"):
        parse_study({"protocolSection": {}})


@pytest.mark.parametrize(("text", "years"), [
    ("18 Years", 18.0), ("1 Year", 1.0), ("6 Months", 0.5), ("28 Days", 28 / 365.25), ("N/A", None), (None, None)])
def test_age_in_years(text: str | None, years: float | None) -> None:
    assert age_in_years(text) == (pytest.approx(years) if years else None)


def test_nct_ids_are_normalised_like_ctgov_does() -> None:
    assert normalize_nct_id(" nct2576665 ") == "NCT02576665"
    assert normalize_nct_id("NCT0002576665") == "NCT02576665"
    with pytest.raises(ValueError):
        normalize_nct_id("NCT0")


def test_search_params_errors_are_clear() -> None:
    with pytest.raises(ValueError, match="min_age .70. must not be greater than max_age .18."):
        TrialSearchParams(min_age=70, max_age=18)
    with pytest.raises(ValueError, match="PHASE1"):
        TrialSearchParams(phase=["Phase 1"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="Extra inputs"):
        TrialSearchParams(conditon="typo")  # type: ignore[call-arg]
    assert TrialSearchParams(condition="  ", phase=["PHASE2", "PHASE2"]).model_dump(exclude_defaults=True) == {
        "phase": ["PHASE2"]}


def test_retry_after_accepts_seconds_and_http_dates() -> None:
    assert retry_after_seconds("12") == 12.0
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert retry_after_seconds(format_datetime(now + timedelta(seconds=30), usegmt=True),
                               now=now.timestamp()) == 30.0
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None


async def test_concurrent_callers_share_the_slots() -> None:
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        await asyncio.sleep(0)  # let the other callers reserve while this one waits

    limiter = RateLimiter(1.5, clock=lambda: 1000.0, sleep=sleep)
    await asyncio.gather(*(limiter.acquire() for _ in range(4)))
    # Each caller reserved its own slot before sleeping: 0, 1.5, 3.0, 4.5 s after the first.
    assert sleeps == [1.5, 3.0, 4.5]


async def test_hold_off_delays_everyone() -> None:
    fake = FakeTime()
    limiter = RateLimiter(1.0, clock=fake.clock, sleep=fake.sleep)
    await limiter.acquire()
    limiter.hold_off(10)
    await limiter.acquire()
    assert fake.sleeps == [10.0]
