"""Live PubMed backend over NCBI E-utilities (esearch, efetch, esummary; elink + efetch db=pmc for
full text, `pmc.py`).

A search is esearch (JSON: count, PMIDs of the page, the query translation) followed by efetch
(XML: the records; PubMed has no JSON efetch). NCBI allows 3 requests/s per IP, 10 with an API
key; the limiter is shared by every user of the process. NCBI reports some failures with HTTP 200
(`{"esearchresult": {"ERROR": ...}}`, a rate-limit body), so bodies are checked, not just statuses.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any, Unpack

import httpx

from backend.errors import InvalidInput, NotFound, UpstreamError
from backend.sources.models import (
    Article,
    ArticleSearchPage,
    ArticleSearchParams,
    ArticleSummary,
    checked_pmid,
)
from backend.sources.pmc import FullText, FullTextMissing, PMCFormatError, parse_elink, parse_pmc_article
from backend.sources.pubmed_records import PubMedXMLError, parse_efetch, parse_esummary
from backend.sources.throttle import ClientOptions, RateLimiter, UpstreamClient, error_text, send

BASE_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
UPSTREAM = "PubMed (NCBI E-utilities)"
TOOL_NAME = "colleague"
FETCH_CHUNK = 200  # keeps GET URLs short, as NCBI asks
SORTS = {"relevance": "relevance", "date": "pub_date"}

# Slightly under NCBI's 3/s and 10/s, so clock jitter never tips us over.
shared_limiters = {False: RateLimiter(0.34), True: RateLimiter(0.11)}


def _is_rate_limit_body(response: httpx.Response) -> bool:
    head = response.content[:300].lower()
    return b'"error"' in head and b"rate limit" in head


def _pdat(value: date) -> str:
    return value.strftime("%Y/%m/%d")


def build_esearch_query(params: ArticleSearchParams) -> dict[str, str]:
    query = {
        "db": "pubmed", "term": params.query, "retmode": "json", "sort": SORTS[params.sort],
        "retstart": str((params.page - 1) * params.page_size), "retmax": str(params.page_size),
    }
    if params.date_start or params.date_end:
        # NCBI needs both ends of a date range.
        query["datetype"] = "pdat"
        query["mindate"] = _pdat(params.date_start) if params.date_start else "1800/01/01"
        query["maxdate"] = _pdat(params.date_end) if params.date_end else "3000/12/31"
    return query


class PubMedService(UpstreamClient):
    """Live articles source. Pass `transport` (e.g. `httpx.MockTransport`) to run without network."""

    def __init__(self, *, api_key: str | None = None, email: str | None = None,
                 **options: Unpack[ClientOptions]) -> None:
        super().__init__(options, upstream=UPSTREAM, base_url=BASE_URL, limiter=shared_limiters[bool(api_key)])
        self._identity = {"tool": TOOL_NAME} | ({"email": email} if email else {}) | (
            {"api_key": api_key} if api_key else {})

    async def _get(self, endpoint: str, params: dict[str, str]) -> httpx.Response:
        response = await send(self._client, "GET", f"/{endpoint}", params=params | self._identity,
                              upstream=UPSTREAM, limiter=self._limiter, policy=self._retry,
                              is_rate_limited=_is_rate_limit_body)
        if response.status_code == 400:
            raise InvalidInput(f"{UPSTREAM} rejected the request: {_message(response)}")
        if response.status_code >= 300:
            raise UpstreamError(f"{UPSTREAM} answered HTTP {response.status_code}: {_message(response)}")
        return response

    async def _get_json(self, endpoint: str, params: dict[str, str]) -> dict[str, Any]:
        body = self._json_object(await self._get(endpoint, params), endpoint)
        if isinstance(body.get("error"), str):
            raise UpstreamError(f"{UPSTREAM} {endpoint} failed: {body['error']}")
        return body

    async def esearch(self, params: ArticleSearchParams) -> tuple[int, list[str], str | None]:
        """(total count, PMIDs of the requested page, PubMed's translation of the query)."""
        body = await self._get_json("esearch.fcgi", build_esearch_query(params))
        result = body.get("esearchresult")
        if not isinstance(result, dict):
            raise UpstreamError(f"{UPSTREAM} esearch answered without an esearchresult")
        if result.get("ERROR"):
            raise InvalidInput(f"PubMed could not run the query {params.query!r}: {result['ERROR']}")
        try:
            count = int(result.get("count", 0))
        except (TypeError, ValueError) as exc:
            raise UpstreamError(f"{UPSTREAM} esearch returned a non-numeric count") from exc
        ids = [str(i) for i in result.get("idlist") or []]
        return count, ids, result.get("querytranslation") or None

    async def efetch(self, pmids: Sequence[str]) -> list[Article]:
        articles: list[Article] = []
        for start in range(0, len(pmids), FETCH_CHUNK):
            chunk = pmids[start:start + FETCH_CHUNK]
            query = {"db": "pubmed", "id": ",".join(chunk), "retmode": "xml"}
            response = await self._get("efetch.fcgi", query)
            try:
                articles += parse_efetch(response.content)
            except PubMedXMLError as exc:
                raise UpstreamError(f"{UPSTREAM} efetch returned no usable records: {exc}") from exc
        return articles

    async def esummary(self, pmids: Sequence[str]) -> list[ArticleSummary]:
        summaries: list[ArticleSummary] = []
        for start in range(0, len(pmids), FETCH_CHUNK):
            chunk = pmids[start:start + FETCH_CHUNK]
            body = await self._get_json("esummary.fcgi", {"db": "pubmed", "id": ",".join(chunk),
                                                          "retmode": "json"})
            summaries += parse_esummary(body)
        return summaries

    async def search_articles(self, params: ArticleSearchParams) -> ArticleSearchPage:
        total, ids, translation = await self.esearch(params)
        by_id = {a.pmid: a for a in await self.efetch(ids)} if ids else {}
        return ArticleSearchPage(articles=[by_id[i] for i in ids if i in by_id], total_count=total,
                                 query_translation=translation, page=params.page, page_size=params.page_size)

    async def get_article(self, pmid: str) -> Article:
        pmid = checked_pmid(pmid)
        articles = await self.efetch([pmid])
        if not articles or articles[0].pmid != pmid:
            raise NotFound(f"No PubMed article with PMID {pmid}")
        return articles[0]

    async def get_articles(self, pmids: Sequence[str]) -> list[Article]:
        """Full records in the order asked; PMIDs PubMed does not know are left out."""
        wanted = list(dict.fromkeys(checked_pmid(p) for p in pmids))
        by_id = {a.pmid: a for a in await self.efetch(wanted)} if wanted else {}
        return [by_id[p] for p in wanted if p in by_id]

    async def get_full_text(self, pmid: str) -> FullText | FullTextMissing:
        """The article's PubMed Central full text: elink pubmed→pmc, then efetch db=pmc (JATS XML)."""
        pmid = checked_pmid(pmid)
        body = await self._get_json("elink.fcgi", {"dbfrom": "pubmed", "db": "pmc", "id": pmid,
                                                   "linkname": "pubmed_pmc", "retmode": "json"})
        try:
            pmc_ids = parse_elink(body)
        except PMCFormatError as exc:
            raise UpstreamError(f"{UPSTREAM} elink: {exc}") from exc
        if not pmc_ids:
            return FullTextMissing(pmid=pmid, reason=f"PMID {pmid} has no PubMed Central version, so only its "
                                                     "abstract is available (get_pubmed_article).")
        response = await self._get("efetch.fcgi", {"db": "pmc", "id": pmc_ids[0], "retmode": "xml"})
        try:
            text = parse_pmc_article(response.content, pmid)
        except PMCFormatError as exc:
            raise UpstreamError(f"{UPSTREAM} efetch db=pmc: {exc}") from exc
        if text is None or not text.sections:
            return FullTextMissing(pmid=pmid, reason=f"PMC{pmc_ids[0]} (PMID {pmid}) is in PubMed Central but "
                                                     "not in its open-access subset: the publisher does not "
                                                     "allow the full text to be downloaded.")
        return text

    async def get_article_summaries(self, pmids: Sequence[str]) -> list[ArticleSummary]:
        wanted = list(dict.fromkeys(checked_pmid(p) for p in pmids))
        by_id = {s.pmid: s for s in await self.esummary(wanted)} if wanted else {}
        return [by_id[p] for p in wanted if p in by_id]


def _message(response: httpx.Response) -> str:
    return error_text(response, ("error",), "empty body")