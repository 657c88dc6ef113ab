from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing

import pytest

from backend.sources.clinical_trials import ClinicalTrialsService
from backend.sources.pubmed import PubMedService

from .fakes import FakeCTGov, FakeEUtils, FakeTime, live_service
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
    async with aclosing(live_service(ClinicalTrialsService, ctgov, 1.5, fake_time)) as service:
        yield service


@pytest.fixture
async def live_pubmed(eutils: FakeEUtils, fake_time: FakeTime) -> AsyncIterator[PubMedService]:
    async with aclosing(live_service(PubMedService, eutils, 0.34, fake_time)) as service:
        yield service
