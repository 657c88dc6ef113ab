"""Choosing the backend from settings, and what /api/health is told."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from backend.config import Settings
from backend.sources import PubMedSource, TrialsSource, close_sources, get_sources
from backend.sources.clinical_trials import ClinicalTrialsService
from backend.sources.offline import OfflineClinicalTrialsService, OfflinePubMedService
from backend.sources.pubmed import PubMedService


@pytest.fixture(autouse=True)
async def fresh_cache() -> AsyncIterator[None]:
    await close_sources()
    yield
    await close_sources()


def settings(**env: str) -> Settings:
    return Settings.model_validate(env)


def test_offline_is_the_default() -> None:
    sources = get_sources(settings())
    assert sources.mode == "offline"
    assert isinstance(sources.trials, OfflineClinicalTrialsService)
    assert isinstance(sources.pubmed, OfflinePubMedService)
    assert sources.describe() == {
        "mode": "offline", "trials": "embedded ClinicalTrials.gov v2 corpus", "pubmed": "embedded PubMed corpus"}


def test_live_uses_the_real_apis_and_the_ncbi_key() -> None:
    live = settings(COLLEAGUE_SOURCES="live", NCBI_API_KEY="secret")
    sources = get_sources(live)
    assert isinstance(sources.trials, ClinicalTrialsService) and isinstance(sources.pubmed, PubMedService)
    assert isinstance(sources.trials, TrialsSource) and isinstance(sources.pubmed, PubMedSource)
    info = sources.describe()
    assert info["mode"] == "live" and info["ncbi_api_key"] is True and info["pubmed_requests_per_second"] == 10
    assert "secret" not in str(info)
    assert get_sources(settings(COLLEAGUE_SOURCES="live")).describe()["pubmed_requests_per_second"] == 3


def test_one_instance_per_configuration() -> None:
    assert get_sources(settings()) is get_sources(settings())
    live = get_sources(settings(COLLEAGUE_SOURCES="live"))
    assert live is get_sources(settings(COLLEAGUE_SOURCES="live")) is not get_sources(settings())


async def test_close_sources_closes_live_clients() -> None:
    live = get_sources(settings(COLLEAGUE_SOURCES="live"))
    await close_sources()
    assert live.trials._client.is_closed and live.pubmed._client.is_closed  # type: ignore[attr-defined]
    assert get_sources(settings(COLLEAGUE_SOURCES="live")) is not live


def test_an_unknown_mode_is_a_settings_error() -> None:
    with pytest.raises(ValueError, match="offline"):
        settings(COLLEAGUE_SOURCES="mock")
