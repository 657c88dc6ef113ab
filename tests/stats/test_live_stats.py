"""Live statistics against fakes at the network edge: real study JSON and PubMed XML, served the way
ClinicalTrials.gov pages `/studies` and E-utilities counts terms; figures computed from those records."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import aclosing
from datetime import date
from typing import Any

import httpx
import pytest

from backend.sources.clinical_trials import ClinicalTrialsService
from backend.sources.pubmed import PubMedService
from backend.sources.pubmed_records import parse_efetch
from backend.stats import live
from backend.stats.models import ArticleStatsRequest, TrialStatsRequest
from tests.sources.fakes import corpus_studies, efetch_corpus, live_service


class PagingCTGov:
    """GET /studies: every corpus study matches; pages of `pageSize` with a token, totalCount on page one."""

    def __init__(self) -> None:
        self.studies = list(corpus_studies().values())
        self.requests: list[httpx.QueryParams] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        q = request.url.params
        self.requests.append(q)
        assert int(q["pageSize"]) <= 1000
        start = int(q.get("pageToken", "0"))
        end = start + int(q["pageSize"])
        body: dict[str, Any] = {"studies": self.studies[start:end]}
        if start == 0:
            body["totalCount"] = len(self.studies)
        if end < len(self.studies):
            body["nextPageToken"] = str(end)
        return httpx.Response(200, json=body)


class CountingEUtils:
    """esearch counts `(query) AND <clause>` over the recorded PubMed records (the query itself matches all)."""

    def __init__(self) -> None:
        doctype, self.xml = efetch_corpus()
        self.doctype = doctype
        self.articles = parse_efetch(b"<PubmedArticleSet>" + b"".join(self.xml.values()) + b"</PubmedArticleSet>")
        self.terms: list[str] = []

    def _matches(self, term: str) -> list[str]:
        found = self.articles
        for clause in re.findall(r' AND \(?("?[^"\[]+"?)\[(\w+)\]\)?', term):
            value, tag = clause[0].strip('"'), clause[1]
            if tag == "dp":
                found = [a for a in found if str(a.year) == value]
            elif tag == "pt":
                found = [a for a in found if value in a.publication_types]
        return [a.pmid for a in found]

    def __call__(self, request: httpx.Request) -> httpx.Response:
        endpoint, q = request.url.path.rsplit("/", 1)[1], request.url.params
        if endpoint == "esearch.fcgi":
            self.terms.append(q["term"])
            ids = self._matches(q["term"])
            return httpx.Response(200, json={"esearchresult": {
                "count": str(len(ids)), "idlist": ids[:int(q["retmax"])], "querytranslation": q["term"]}})
        ids = q["id"].split(",")
        body = b"".join(self.xml[i] for i in ids if i in self.xml)
        return httpx.Response(200, content=b"<?xml version=\"1.0\" ?>\n" + self.doctype + b"\n<PubmedArticleSet>"
                              + body + b"</PubmedArticleSet>")


@pytest.fixture
async def ctgov() -> AsyncIterator[tuple[ClinicalTrialsService, PagingCTGov]]:
    fake = PagingCTGov()
    async with aclosing(live_service(ClinicalTrialsService, fake, 1.5)) as service:
        yield service, fake


@pytest.fixture
async def eutils() -> AsyncIterator[tuple[PubMedService, CountingEUtils]]:
    fake = CountingEUtils()
    async with aclosing(live_service(PubMedService, fake, 0.34)) as service:
        yield service, fake


def _counts(body: Any, facet: str) -> dict[str, int]:
    return {b.value: b.count for f in body.facets if f.facet == facet for b in f.buckets}


async def test_trials_are_counted_over_every_page_when_the_result_fits(ctgov: Any) -> None:
    service, fake = ctgov
    stats = await live.trial_stats(service, TrialStatsRequest(search={"condition": "cancer"}, limit=100,
                                                              facets=["sponsor_class", "phase", "country"]))
    studies = fake.studies
    assert stats.source == "live" and not stats.sampled and stats.total == len(studies)
    classes = Counter(c for s in studies
                      if (c := s["protocolSection"].get("sponsorCollaboratorsModule", {})
                          .get("leadSponsor", {}).get("class")))
    assert _counts(stats, "sponsor_class") == dict(classes)
    assert _counts(stats, "phase") == dict(Counter(
        p for s in studies for p in dict.fromkeys(s["protocolSection"].get("designModule", {}).get("phases", []))))
    first = fake.requests[0]
    assert first["query.cond"] == "cancer"
    assert {"LeadSponsorClass", "InterventionType", "LocationCountry"} <= set(first["fields"].split(","))


async def test_past_the_sample_the_figures_say_they_are_sampled(ctgov: Any,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    service, fake = ctgov
    monkeypatch.setattr(live, "TRIAL_SAMPLE", 150)
    stats = await live.trial_stats(service, TrialStatsRequest(facets=["status"], filters={"status": ["COMPLETED"]}))
    assert len(fake.requests) == 1 and fake.requests[0]["pageSize"] == "150"
    assert stats.sampled and "first 150 of 375" in (stats.note or "")
    completed = sum(1 for s in fake.studies[:150]
                    if s["protocolSection"].get("statusModule", {}).get("overallStatus") == "COMPLETED")
    assert stats.total == completed and _counts(stats, "status") == {"COMPLETED": completed}
    assert stats.facets[0].sampled and stats.facets[0].basis == completed


async def test_articles_years_and_types_are_exact_counts_journals_a_sample(eutils: Any,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    service, fake = eutils
    monkeypatch.setattr(live, "ARTICLE_SAMPLE", 40)
    request = ArticleStatsRequest(search={"query": "asthma"}, limit=100,
                                  facets=["year", "publication_type", "journal"])
    stats = await live.article_stats(service, request, today=date(2024, 6, 1))
    articles = fake.articles
    assert stats.total == len(articles)
    years = Counter(str(a.year) for a in articles if a.year and 2015 <= a.year <= 2024)
    assert _counts(stats, "year") == dict(years)
    year = next(f for f in stats.facets if f.facet == "year")
    assert year.other == len(articles) - sum(years.values()) and not year.sampled
    assert "(asthma) AND 2019[dp]" in fake.terms
    types = Counter(t for a in articles for t in a.publication_types if t in live.COMMON_PUBLICATION_TYPES)
    assert _counts(stats, "publication_type") == dict(types)
    journal = next(f for f in stats.facets if f.facet == "journal")
    assert journal.sampled and journal.basis == 40 and stats.sampled
    assert sum(b.count for b in journal.buckets) + journal.other == sum(1 for a in articles[:40] if a.journal)


async def test_article_filters_become_field_tags(eutils: Any) -> None:
    service, fake = eutils
    request = ArticleStatsRequest(search={"query": "asthma"}, facets=["publication_type"],
                                  filters={"publication_type": ["Review"]})
    stats = await live.article_stats(service, request)
    assert fake.terms[0] == '(asthma) AND ("Review"[pt])'
    assert stats.total == sum(1 for a in fake.articles if "Review" in a.publication_types)
