from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from backend.sources.clinical_trials import ClinicalTrialsService
from backend.sources.pubmed import PubMedService
from backend.sources.throttle import RateLimiter, RetryPolicy

from .fakes import FakeCTGov, FakeEUtils, FakeTime
from .raw_corpus import RawCorpus, read_raw_corpus


@pytest.fixture(scope="session")
def raw() -> RawCorpus:
    """The offline data files read directly, for figures computed independently of the index."""
    return read_raw_corpus()


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


@pytest.fixture
def ctgov() -> FakeCTGov:
    return FakeCTGov()


@pytest.fixture
def eutils() -> FakeEUtils:
    return FakeEUtils()


@pytest.fixture
async def live_trials(ctgov: FakeCTGov, fake_time: FakeTime) -> AsyncIterator[ClinicalTrialsService]:
    service = ClinicalTrialsService(
        transport=httpx.MockTransport(ctgov),
        limiter=RateLimiter(1.5, clock=fake_time.clock, sleep=fake_time.sleep),
        retry=RetryPolicy(),
    )
    yield service
    await service.aclose()


@pytest.fixture
async def live_pubmed(eutils: FakeEUtils, fake_time: FakeTime) -> AsyncIterator[PubMedService]:
    service = PubMedService(
        transport=httpx.MockTransport(eutils),
        limiter=RateLimiter(0.34, clock=fake_time.clock, sleep=fake_time.sleep),
    )
    yield service
    await service.aclose()
