"""One contract, two backends: every test here runs against offline and live (recorded HTTP)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import pytest

from backend.errors import InvalidInput, NotFound
from backend.sources import PubMedSource, Sources, TrialsSource
from backend.sources.clinical_trials import ClinicalTrialsService
from backend.sources.models import ArticleSearchParams, TrialDetail, TrialSearchParams
from backend.sources.offline import OfflineClinicalTrialsService, OfflinePubMedService
from backend.sources.pubmed import PubMedService

KNOWN_NCT = "NCT06576635"  # full record in both the corpus and the fake CT.gov
KNOWN_PMID = "22663011"  # METRIC trial, NEJM 2012: structured abstract, DataBank link to NCT01245062


@dataclass
class Backend:
    sources: Sources
    trial_search: TrialSearchParams  # a search with at least two pages in this backend


@pytest.fixture(params=["offline", "live"])
def backend(request: pytest.FixtureRequest) -> Backend:
    if request.param == "offline":
        return Backend(Sources("offline", OfflineClinicalTrialsService(), OfflinePubMedService()),
                       TrialSearchParams(condition="non-small cell lung cancer", page_size=5))
    trials: ClinicalTrialsService = request.getfixturevalue("live_trials")
    pubmed: PubMedService = request.getfixturevalue("live_pubmed")
    # The recorded Phelan-McDermid pages: 5 studies, totalCount 21, then the pageToken page.
    return Backend(Sources("live", trials, pubmed), TrialSearchParams(condition="Phelan-McDermid Syndrome",
                                                                      page_size=5))


def test_services_satisfy_the_protocols(backend: Backend) -> None:
    assert isinstance(backend.sources.trials, TrialsSource)
    assert isinstance(backend.sources.pubmed, PubMedSource)


async def test_search_trials_returns_a_page_with_a_real_total(backend: Backend) -> None:
    page = await backend.sources.trials.search_trials(backend.trial_search)
    assert 0 < len(page.trials) <= backend.trial_search.page_size
    assert page.total_count > len(page.trials)
    assert page.next_page_token
    for trial in page.trials:
        assert re.fullmatch(r"NCT\d{8}", trial.nct_id)
        assert trial.title
        assert trial.url == f"https://clinicaltrials.gov/study/{trial.nct_id}"


async def test_next_page_token_continues_the_same_search(backend: Backend) -> None:
    first = await backend.sources.trials.search_trials(backend.trial_search)
    second = await backend.sources.trials.search_trials(
        backend.trial_search.model_copy(update={"page_token": first.next_page_token}))
    assert second.trials
    assert not {t.nct_id for t in first.trials} & {t.nct_id for t in second.trials}
    assert second.total_count == first.total_count  # CT.gov only reports it on page one


async def test_garbage_page_token_is_invalid_input(backend: Backend) -> None:
    with pytest.raises(InvalidInput, match="page_token"):
        await backend.sources.trials.search_trials(
            backend.trial_search.model_copy(update={"page_token": "not-a-token!"}))


async def test_get_trial_by_nct_id_returns_the_full_record(backend: Backend) -> None:
    trial = await backend.sources.trials.get_trial_by_nct_id(KNOWN_NCT.lower())
    assert isinstance(trial, TrialDetail)
    assert trial.nct_id == KNOWN_NCT
    assert trial.eligibility_criteria and "Inclusion Criteria" in trial.eligibility_criteria
    assert trial.minimum_age == "18 Years" and trial.sex == "ALL"
    assert trial.primary_outcomes and trial.arms and trial.locations
    assert trial.locations_count == len(trial.locations)


@pytest.mark.parametrize(("get", "bad_id", "error", "message"), [
    (lambda b: b.sources.trials.get_trial_by_nct_id, "NCT09999999", NotFound, "NCT09999999"),
    (lambda b: b.sources.trials.get_trial_by_nct_id, "12345", InvalidInput, "not an NCT id"),
    (lambda b: b.sources.pubmed.get_article, "39999999", NotFound, "39999999"),
    (lambda b: b.sources.pubmed.get_article, "PMC12345", InvalidInput, "not a PubMed id"),
], ids=["unknown-nct-id", "malformed-nct-id", "unknown-pmid", "malformed-pmid"])
async def test_unknown_id_is_not_found_and_malformed_id_is_invalid_input(
        backend: Backend, get: Callable[[Backend], Callable[[str], Awaitable[object]]], bad_id: str,
        error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        await get(backend)(bad_id)


async def test_get_trials_by_nct_ids_keeps_order_and_skips_unknown(backend: Backend) -> None:
    ids = ["NCT02576665", "NCT09999999", KNOWN_NCT, "nct2576665"]
    trials = await backend.sources.trials.get_trials_by_nct_ids(ids)
    assert [t.nct_id for t in trials] == ["NCT02576665", KNOWN_NCT]


async def test_search_articles_returns_a_page(backend: Backend) -> None:
    params = ArticleSearchParams(query="nasopharyngeal carcinoma", page_size=10)
    page = await backend.sources.pubmed.search_articles(params)
    assert len(page.articles) == 10
    assert page.total_count > 10
    assert (page.page, page.page_size) == (1, 10)
    assert page.query_translation
    second = await backend.sources.pubmed.search_articles(params.model_copy(update={"page": 2}))
    assert not {a.pmid for a in page.articles} & {a.pmid for a in second.articles}
    assert all(a.pmid.isdigit() and a.title for a in page.articles + second.articles)


async def test_get_article_parses_the_record(backend: Backend) -> None:
    article = await backend.sources.pubmed.get_article(KNOWN_PMID)
    assert article.title == "Improved survival with MEK inhibition in BRAF-mutated melanoma."
    assert [s.label for s in article.abstract_sections] == ["BACKGROUND", "METHODS", "RESULTS", "CONCLUSIONS"]
    assert article.abstract.startswith("BACKGROUND: Activating mutations")
    assert article.nct_ids == ["NCT01245062"]
    assert article.doi == "10.1056/NEJMoa1203421"
    assert article.year == 2012 and article.journal == "The New England journal of medicine"
    assert "Melanoma" in article.mesh_terms
    assert article.authors[0] == "Flaherty KT"


async def test_get_articles_keeps_order_and_skips_unknown(backend: Backend) -> None:
    articles = await backend.sources.pubmed.get_articles(["27797938", "39999999", KNOWN_PMID])
    assert [a.pmid for a in articles] == ["27797938", KNOWN_PMID]


async def test_get_article_summaries(backend: Backend) -> None:
    if backend.sources.mode == "live":
        ids = ["34313350", "27078154"]  # the recorded esummary
    else:
        ids = [KNOWN_PMID, "27797938"]
    summaries = await backend.sources.pubmed.get_article_summaries(ids)
    assert [s.pmid for s in summaries] == ids
    assert all(s.title and s.authors and s.year for s in summaries)
