"""Fake ClinicalTrials.gov and E-utilities servers that answer with recorded bodies.

Each fake is a plain `Request -> Response` function for `httpx.MockTransport`. Single studies,
efetch records and recorded searches are real bytes from the fixtures; a request without a
recording gets a 400 naming it, so a test can never pass on an invented answer by accident.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import httpx
from lxml import etree

from backend.sources.clinical_trials import ClinicalTrialsService
from backend.sources.ctgov_records import study_nct_id
from backend.sources.offline.corpus import DATA_DIR, iter_study_records
from backend.sources.pubmed import PubMedService
from backend.sources.throttle import RateLimiter

FIXTURES = Path(__file__).with_name("fixtures")
S = TypeVar("S", ClinicalTrialsService, PubMedService)
PHELAN_TOKEN = "ZVt07cGHkvI2wRk2CJf6_LLq14bEL8swd7KrgP4dnDeTsPkw"


def recorded(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


@dataclass
class FakeTime:
    """Injectable clock and sleep: sleeping advances the clock instantly and is recorded."""

    now: float = 1000.0
    sleeps: list[float] = field(default_factory=list)

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 6))
        self.now += seconds


def live_service(service: type[S], fake: Callable[[httpx.Request], httpx.Response], rate: float,
                 clock: FakeTime | None = None) -> S:
    """A live source's client over `fake` (no network), limited to `rate` requests a second on `clock`."""
    clock = clock or FakeTime()
    return service(transport=httpx.MockTransport(fake), limiter=RateLimiter(rate, clock=clock.clock, sleep=clock.sleep))


@cache
def corpus_studies() -> dict[str, dict[str, Any]]:
    studies: dict[str, dict[str, Any]] = {}
    for study in iter_study_records():
        nct_id = study_nct_id(study)
        if nct_id and len(study) >= len(studies.get(nct_id, {})):
            studies[nct_id] = study
    return studies


class FakeCTGov:
    """GET /api/v2/studies and /api/v2/studies/{id}, from recordings and the corpus files."""

    def __init__(self) -> None:
        self.studies = corpus_studies()
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        path, q = request.url.path, request.url.params
        if path.startswith("/api/v2/studies/"):
            nct_id = path.rsplit("/", 1)[1].upper()
            if nct_id in self.studies:
                return httpx.Response(200, json=self.studies[nct_id])
            return httpx.Response(404, text=f"Study {nct_id} not found")
        if path != "/api/v2/studies":
            return httpx.Response(404, text="unknown path")
        if "filter.ids" in q:
            ids = q["filter.ids"].split(",")
            return httpx.Response(200, json={"studies": [self.studies[i] for i in ids if i in self.studies]})
        if q.get("pageToken") == PHELAN_TOKEN:
            return httpx.Response(200, json=recorded("ctgov/biomcp_search_phelan_next_20260811.json"))
        if q.get("query.cond") == "Phelan-McDermid Syndrome" and "pageToken" not in q:
            size = "limit5" if q.get("pageSize") == "5" else "limit50"
            return httpx.Response(200, json=recorded(f"ctgov/biomcp_search_phelan_{size}_20260811.json"))
        if q.get("query.cond") == "melanoma" and q.get("filter.overallStatus") == "RECRUITING":
            return httpx.Response(200, json=recorded("ctgov/biomcp_search_melanoma_recruiting_limit3_20260811.json"))
        if q.get("query.intr") == '"Keytruda"':
            return httpx.Response(200, json=recorded("ctgov/biomcp_search_keytruda_limit3_20260811.json"))
        return httpx.Response(400, text=f"fake CT.gov has no recording for {request.url}")


@cache
def efetch_corpus() -> tuple[bytes, dict[str, bytes]]:
    """DOCTYPE line and every record's own XML bytes, by PMID."""
    records: dict[str, bytes] = {}
    doctype = b""
    for path in sorted((DATA_DIR / "pubmed").glob("*.xml.gz")):
        tree = etree.fromstring(gzip.decompress(path.read_bytes()), etree.XMLParser(resolve_entities=False))
        doctype = doctype or (tree.getroottree().docinfo.doctype.encode())
        for node in tree:
            pmid = node.findtext("MedlineCitation/PMID") or node.findtext("BookDocument/PMID")
            if pmid:
                records.setdefault(pmid, etree.tostring(node))
    return doctype, records


class FakeEUtils:
    """esearch / efetch / esummary, and elink + efetch db=pmc for full text. esearch answers in the
    recorded JSON shape (see `search_ids`); elink and PMC articles come from `fixtures/pubmed`, by id."""

    def __init__(self) -> None:
        self.doctype, self.records = efetch_corpus()
        # Unrecorded esearch terms answer with this fixed list of corpus PMIDs, paged like PubMed.
        self.search_ids = list(self.records)[:45]
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        endpoint, q = request.url.path.rsplit("/", 1)[1], request.url.params
        if endpoint == "esearch.fcgi":
            return self._esearch(q)
        if endpoint == "elink.fcgi" and (q.get("dbfrom"), q.get("db"), q.get("retmode")) == ("pubmed", "pmc", "json"):
            return _fixture(f"elink_pubmed_pmc_{q.get('id')}", "json")
        if endpoint == "efetch.fcgi" and q.get("db") == "pmc":
            return _fixture(f"efetch_pmc_{q.get('id')}", "xml")
        if endpoint == "efetch.fcgi":
            ids = q.get("id", "").split(",")
            body = b"".join(self.records[i] for i in ids if i in self.records)
            xml = b'<?xml version="1.0" ?>\n' + self.doctype + b"\n<PubmedArticleSet>" + body + b"</PubmedArticleSet>"
            return httpx.Response(200, content=xml, headers={"Content-Type": "text/xml"})
        if endpoint == "esummary.fcgi" and q.get("id") == "34313350,27078154":
            return httpx.Response(200, json=recorded("pubmed/yeliztli_esummary_34313350_27078154.json"))
        return httpx.Response(400, json={"error": f"fake E-utilities has no recording for {request.url}"})

    def _esearch(self, q: httpx.QueryParams) -> httpx.Response:
        term = q.get("term", "")
        if term in RECORDED_ESEARCH:
            return httpx.Response(200, json=recorded(f"pubmed/{RECORDED_ESEARCH[term]}"))
        start, size = int(q.get("retstart", "0")), int(q.get("retmax", "20"))
        body = recorded("pubmed/biomcp_esearch_pten_d326n.json")
        body["esearchresult"].update(
            count=str(len(self.search_ids)), retmax=str(size), retstart=str(start),
            idlist=self.search_ids[start:start + size], querytranslation=f"{term}[All Fields]",
        )
        return httpx.Response(200, json=body)


def _fixture(stem: str, ext: str) -> httpx.Response:
    """The recorded body whose name starts with `stem` (the rest of the name says what it shows)."""
    found = sorted((FIXTURES / "pubmed").glob(f"{stem}.{ext}")) + sorted((FIXTURES / "pubmed").glob(f"{stem}_*.{ext}"))
    if not found:
        return httpx.Response(400, json={"error": f"fake E-utilities has no recording {stem}.{ext}"})
    media = "application/json" if ext == "json" else "text/xml"
    return httpx.Response(200, content=found[0].read_bytes(), headers={"Content-Type": media})


# Terms whose esearch answer was recorded (the zero-hit body stands in for any "nothing found" term).
RECORDED_ESEARCH = {
    '("PTEN"[Title/Abstract] AND "D326N"[Title/Abstract])': "biomcp_esearch_pten_d326n.json",
    '("MLH1"[Title/Abstract] AND "G67E"[Title/Abstract])': "biomcp_esearch_mlh1_g67e.json",
    "APC p.E1317Q NOT retracted publication[pt]": "biomcp_esearch_apc_e1317q_phrase_not_found.json",
    "Correction Publication": "yeliztli_esearch_no_results_phrases_not_found.json",
}
