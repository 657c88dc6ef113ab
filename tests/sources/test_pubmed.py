"""Live PubMed backend: esearch parameters, rate limits, retries and NCBI's error bodies."""

from __future__ import annotations

from datetime import date

import httpx
import pytest

from backend.errors import InvalidInput, UpstreamError, UpstreamUnavailable
from backend.sources.models import ArticleSearchParams
from backend.sources.pubmed import PubMedService, build_esearch_query, shared_limiters
from backend.sources.throttle import RateLimiter

from .fakes import FakeEUtils, FakeTime, recorded

RATE_LIMITED = recorded("pubmed/biomcp_esummary_rate_limit_exceeded.json")


def service(handler, fake_time: FakeTime, **kwargs: object) -> PubMedService:
    limiter = RateLimiter(0.34, clock=fake_time.clock, sleep=fake_time.sleep)
    return PubMedService(transport=httpx.MockTransport(handler), limiter=limiter, **kwargs)


class TestEsearchParameters:
    def test_query_paging_and_sort(self) -> None:
        query = build_esearch_query(ArticleSearchParams(query="EGFR AND resist*", page=3, page_size=20, sort="date"))
        assert query == {"db": "pubmed", "term": "EGFR AND resist*", "retmode": "json", "sort": "pub_date",
                         "retstart": "40", "retmax": "20"}
        assert build_esearch_query(ArticleSearchParams(query="x"))["sort"] == "relevance"

    def test_date_range_uses_publication_date(self) -> None:
        query = build_esearch_query(ArticleSearchParams(query="x", date_start=date(2019, 3, 1),
                                                        date_end=date(2020, 12, 31)))
        assert (query["datetype"], query["mindate"], query["maxdate"]) == ("pdat", "2019/03/01", "2020/12/31")

    def test_an_open_ended_range_gets_both_ends(self) -> None:
        query = build_esearch_query(ArticleSearchParams(query="x", date_start=date(2019, 1, 1)))
        assert (query["mindate"], query["maxdate"]) == ("2019/01/01", "3000/12/31")

    def test_params_are_validated_before_any_request(self) -> None:
        with pytest.raises(ValueError, match="date_start"):
            ArticleSearchParams(query="x", date_start=date(2020, 1, 1), date_end=date(2019, 1, 1))
        with pytest.raises(ValueError, match="10,000"):
            ArticleSearchParams(query="x", page=101, page_size=100)
        with pytest.raises(ValueError, match="at least 1 character"):
            ArticleSearchParams(query="   ")
        with pytest.raises(ValueError, match="Extra inputs"):
            ArticleSearchParams(query="x", retmax=5)  # type: ignore[call-arg]

    async def test_every_call_identifies_the_tool_and_sends_the_key(self, fake_time: FakeTime,
                                                                    eutils: FakeEUtils) -> None:
        pubmed = service(eutils, fake_time, api_key="k3y", email="dev@example.org")
        await pubmed.search_articles(ArticleSearchParams(query="melanoma", page_size=2))
        assert [r.url.path.rsplit("/", 1)[1] for r in eutils.requests] == ["esearch.fcgi", "efetch.fcgi"]
        for request in eutils.requests:
            assert request.url.params["tool"] == "colleague"
            assert request.url.params["api_key"] == "k3y"
            assert request.url.params["email"] == "dev@example.org"
        assert eutils.requests[1].url.params["id"] == ",".join(eutils.search_ids[:2])
        assert eutils.requests[1].url.params["retmode"] == "xml"


class TestResponses:
    async def test_recorded_esearch_gives_count_ids_and_translation(self, live_pubmed: PubMedService) -> None:
        count, ids, translation = await live_pubmed.esearch(
            ArticleSearchParams(query='("PTEN"[Title/Abstract] AND "D326N"[Title/Abstract])'))
        assert (count, ids) == (3, ["32150788", "29373119", "17427195"])
        assert translation == '"PTEN"[Title/Abstract] AND "D326N"[Title/Abstract]'

    async def test_no_hits_is_an_empty_page_not_an_error(self, live_pubmed: PubMedService) -> None:
        page = await live_pubmed.search_articles(ArticleSearchParams(query="Correction Publication"))
        assert (page.total_count, page.articles) == (0, [])

    async def test_page_articles_follow_esearch_order(self, live_pubmed: PubMedService,
                                                      eutils: FakeEUtils) -> None:
        page = await live_pubmed.search_articles(ArticleSearchParams(query="anything", page=2, page_size=7))
        assert [a.pmid for a in page.articles] == eutils.search_ids[7:14]
        assert page.total_count == len(eutils.search_ids)

    async def test_esearch_error_inside_a_200_is_invalid_input(self, fake_time: FakeTime) -> None:
        body = {"esearchresult": {"ERROR": "Empty term and query_key - nothing todo"}}
        with pytest.raises(InvalidInput, match="nothing todo"):
            await service(lambda r: httpx.Response(200, json=body), fake_time).esearch(ArticleSearchParams(query="x"))

    async def test_recorded_esummary_parses(self, live_pubmed: PubMedService) -> None:
        summaries = await live_pubmed.get_article_summaries(["34313350", "27078154"])
        assert summaries[0].title.startswith("APOE gene ɛ4 allele")
        assert summaries[0].authors[:2] == ["Liu Q", "Wu H"]
        assert (summaries[0].year, summaries[0].doi) == (2021, "10.1002/jcla.23925")
        assert summaries[0].journal == "Journal of clinical laboratory analysis"

    async def test_efetch_error_document_is_an_upstream_error(self, fake_time: FakeTime) -> None:
        xml = b"<eFetchResult><ERROR>Cannot retrieve history data</ERROR></eFetchResult>"
        with pytest.raises(UpstreamError, match="Cannot retrieve history data"):
            await service(lambda r: httpx.Response(200, content=xml), fake_time).get_article("22663011")


class TestRateLimits:
    def test_three_per_second_without_a_key_ten_with_one(self) -> None:
        assert PubMedService()._limiter is shared_limiters[False]
        assert PubMedService(api_key="k")._limiter is shared_limiters[True]
        assert 1 / shared_limiters[False].min_interval <= 3
        assert 1 / shared_limiters[True].min_interval <= 10

    async def test_the_recorded_429_body_is_retried(self, fake_time: FakeTime, eutils: FakeEUtils) -> None:
        replies = [httpx.Response(429, json=RATE_LIMITED, headers={"Retry-After": "1"})]

        def handler(request: httpx.Request) -> httpx.Response:
            return replies.pop(0) if replies else eutils(request)

        article = await service(handler, fake_time).get_article("22663011")
        assert article.pmid == "22663011"
        assert fake_time.sleeps == [1.0]

    async def test_a_rate_limit_body_with_status_200_counts_as_429(self, fake_time: FakeTime,
                                                                   eutils: FakeEUtils) -> None:
        replies = [httpx.Response(200, json=RATE_LIMITED)]

        def handler(request: httpx.Request) -> httpx.Response:
            return replies.pop(0) if replies else eutils(request)

        summaries = await service(handler, fake_time).get_article_summaries(["34313350", "27078154"])
        assert len(summaries) == 2 and fake_time.sleeps == [2.0]

    async def test_persistent_rate_limiting_is_unavailable(self, fake_time: FakeTime) -> None:
        pubmed = service(lambda r: httpx.Response(429, json=RATE_LIMITED), fake_time)
        with pytest.raises(UpstreamUnavailable, match="HTTP 429"):
            await pubmed.get_article("22663011")
        assert fake_time.sleeps == [2.0, 4.0, 8.0]

    async def test_spacing_between_calls(self, fake_time: FakeTime, eutils: FakeEUtils) -> None:
        pubmed = service(eutils, fake_time)
        await pubmed.search_articles(ArticleSearchParams(query="x", page_size=3))
        await pubmed.get_article("22663011")
        assert fake_time.sleeps == [0.34, 0.34]

    async def test_400_quotes_ncbi(self, fake_time: FakeTime) -> None:
        pubmed = service(lambda r: httpx.Response(400, json={"error": "Invalid uid 0 at position 0"}), fake_time)
        with pytest.raises(InvalidInput, match="Invalid uid 0"):
            await pubmed.get_articles(["1"])

    async def test_timeout_is_unavailable(self, fake_time: FakeTime) -> None:
        def handler(request: httpx.Request) -> httpx.Response:
            raise httpx.ConnectTimeout("slow", request=request)

        with pytest.raises(UpstreamUnavailable, match="did not answer in time"):
            await service(handler, fake_time).get_article("22663011")
