"""Full text from PubMed Central through the live E-utilities client (elink pubmed→pmc, efetch db=pmc),
against recorded-format bodies at the network edge; and the offline corpus's clear refusal."""

from __future__ import annotations

import httpx
import pytest

from backend.errors import NotFound, UpstreamError
from backend.sources.offline import OfflinePubMedService
from backend.sources.pmc import FullText, FullTextMissing
from backend.sources.pubmed import PubMedService
from backend.sources.throttle import RateLimiter

from .fakes import FakeEUtils, FakeTime, recorded


async def test_an_open_access_article_comes_back_in_sections(live_pubmed: PubMedService, eutils: FakeEUtils) -> None:
    text = await live_pubmed.get_full_text("33567185")
    assert isinstance(text, FullText)
    assert (text.pmid, text.pmcid) == ("33567185", "PMC7890123")
    assert text.title == "Osimertinib in EGFR-mutated non-small cell lung cancer: a randomised trial"
    assert text.license == "https://creativecommons.org/licenses/by/4.0/"
    assert [s.title for s in text.sections] == ["Abstract", "Introduction", "Methods", "Results", "Discussion"]
    by_title = {s.title: s.text for s in text.sections}
    assert by_title["Abstract"] == ("Background: Osimertinib is a third-generation EGFR tyrosine kinase inhibitor.\n"
                                    "Methods: We randomly assigned 412 patients with EGFR-mutated NSCLC.")
    assert by_title["Introduction"].startswith("Activating EGFR mutations occur in 10–15% of non-small cell lung "
                                               "cancers in Western populations, and up to half")
    assert "Outcomes: The primary end point was progression-free survival:\n- assessed by investigators" in \
        by_title["Methods"]
    assert "registered as NCT02296125" in by_title["Methods"]
    results = by_title["Results"]
    assert len(results) > 25_000 and "Paragraph 20 of the results." in results
    assert "Baseline characteristics" not in results and "Kaplan" not in results  # tables and figures left out
    assert "Lynch TJ" not in str(text.sections)  # the reference list too
    link, fetch = eutils.requests
    assert link.url.path.endswith("/elink.fcgi")
    assert dict(link.url.params) == {"dbfrom": "pubmed", "db": "pmc", "id": "33567185", "linkname": "pubmed_pmc",
                                     "retmode": "json", "tool": "colleague"}
    assert (fetch.url.path.rsplit("/", 1)[1], fetch.url.params["db"], fetch.url.params["id"]) == (
        "efetch.fcgi", "pmc", "7890123")


async def test_no_pmc_link_means_abstract_only(live_pubmed: PubMedService, eutils: FakeEUtils) -> None:
    missing = await live_pubmed.get_full_text("10000001")
    assert isinstance(missing, FullTextMissing)
    assert "no PubMed Central version" in missing.reason and "get_pubmed_article" in missing.reason
    assert len(eutils.requests) == 1  # no efetch without a link


async def test_a_pmc_record_outside_the_open_access_subset_has_no_full_text(live_pubmed: PubMedService) -> None:
    missing = await live_pubmed.get_full_text("30000003")
    assert isinstance(missing, FullTextMissing)
    assert "PMC5550003" in missing.reason and "open-access subset" in missing.reason


async def test_an_elink_error_body_is_an_upstream_error(fake_time: FakeTime) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=recorded("pubmed/elink_error_invalid_db.json"))

    pubmed = PubMedService(transport=httpx.MockTransport(handler),
                           limiter=RateLimiter(0.34, clock=fake_time.clock, sleep=fake_time.sleep))
    with pytest.raises(UpstreamError, match="Invalid db name"):
        await pubmed.get_full_text("33567185")
    await pubmed.aclose()


async def test_a_non_article_efetch_body_is_an_upstream_error(fake_time: FakeTime) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("elink.fcgi"):
            return httpx.Response(200, json=recorded("pubmed/elink_pubmed_pmc_33567185.json"))
        return httpx.Response(200, content=b"<eFetchResult><ERROR>UID=7890123: cannot get document summary"
                                           b"</ERROR></eFetchResult>")

    pubmed = PubMedService(transport=httpx.MockTransport(handler),
                           limiter=RateLimiter(0.34, clock=fake_time.clock, sleep=fake_time.sleep))
    with pytest.raises(UpstreamError, match="cannot get document summary"):
        await pubmed.get_full_text("33567185")
    await pubmed.aclose()


async def test_offline_says_the_full_text_is_not_in_the_embedded_corpus() -> None:
    offline = OfflinePubMedService()
    missing = await offline.get_full_text("27797938")
    assert isinstance(missing, FullTextMissing) and "not in the embedded corpus" in missing.reason
    assert "PMC5442267" in missing.reason  # it names the PMC version live sources could read
    missing = await offline.get_full_text("22663011")
    assert isinstance(missing, FullTextMissing) and "no PubMed Central id" in missing.reason
    with pytest.raises(NotFound):
        await offline.get_full_text("99999999")
