"""Live ClinicalTrials.gov API v2 backend.

Parameter mapping follows spec/prescreen-sequence-diagrams.md, diagram 2:

    condition → query.cond     intervention → query.intr     location → query.locn
    eligibility_keywords, min_age, max_age, study_type → query.term, AND-composed:
        "(keywords) AND (AREA[MinimumAge]RANGE[MIN, 45 years] AND AREA[MaximumAge]RANGE[45 years, MAX]
        AND AREA[StudyType]Interventional)" (filter.studyType is no API parameter: ADR-010)
    phase, sex → aggFilters ("phase:2 3,sex:f")     status → filter.overallStatus (comma-joined)
    page_size → pageSize (≤ 100)     plus countTotal=true, format=json, pageToken

Where the diagram is silent or the live API disagrees with its example we follow the observed API
(reference/ctgov-and-pubmed-apis.md §1.2): several phases are one `phase:` filter with
space-separated values (a repeated filter id is not a multi-select), `NA` keeps its upper-case
name, sponsor goes to `query.spons`, and stray square brackets in user text are escaped because
CT.gov answers 400 to them. One request per 1.5 s per process (40/min), 429 backs off.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Unpack

import httpx

from backend.errors import InvalidInput, NotFound, UpstreamError
from backend.sources.ctgov_records import parse_study, parse_summary, study_nct_id
from backend.sources.models import TrialDetail, TrialSearchPage, TrialSearchParams, checked_nct_id
from backend.sources.paging import decode_page_token, encode_page_token
from backend.sources.throttle import ClientOptions, RateLimiter, UpstreamClient, error_text, send

BASE_URL = "https://clinicaltrials.gov/api/v2"
UPSTREAM = "ClinicalTrials.gov"
MIN_INTERVAL = 1.5  # seconds; the spec's 40 requests/min, shared by every user of the process
MAX_PAGE_SIZE = 100
MAX_STATS_PAGE_SIZE = 1000  # CT.gov's largest page; statistics read projected studies, a few fields each
# Only what a TrialSummary needs: a full record can run to hundreds of kB.
SEARCH_FIELDS = (
    "NCTId", "BriefTitle", "OfficialTitle", "Acronym", "OverallStatus", "Phase", "StudyType", "Condition",
    "InterventionName", "LeadSponsorName", "EnrollmentCount", "StartDate", "PrimaryCompletionDate",
    "CompletionDate", "LocationCountry",
)
PHASE_CODES = {"EARLY_PHASE1": "0", "PHASE1": "1", "PHASE2": "2", "PHASE3": "3", "PHASE4": "4", "NA": "NA"}
SEX_CODES = {"FEMALE": "f", "MALE": "m"}

shared_limiter = RateLimiter(MIN_INTERVAL)

# Essie operators whose own brackets are syntax; any other bracket is escaped.
_ESSIE_OPERATOR = re.compile(r"\b(AREA|RANGE|SEARCH|EXPANSION|COVERAGE|TILT)\[[^\[\]]*\]")


def escape_essie(text: str) -> str:
    """Escape square brackets that are not part of an Essie operator such as AREA[Phase]."""
    out, pos = [], 0
    for match in _ESSIE_OPERATOR.finditer(text):
        out.append(_escape_brackets(text[pos:match.start()]))
        out.append(match.group(0))
        pos = match.end()
    out.append(_escape_brackets(text[pos:]))
    return "".join(out)


def _escape_brackets(text: str) -> str:
    return re.sub(r"(?<!\\)([\[\]])", r"\\\1", text)


def build_search_query(params: TrialSearchParams, *, page_token: str | None = None) -> dict[str, str]:
    """The diagram-2 mapping from our parameters to CT.gov `GET /studies` query parameters."""
    query: dict[str, str] = {"format": "json", "countTotal": "true",
                             "pageSize": str(min(params.page_size, MAX_PAGE_SIZE)),
                             "fields": ",".join(SEARCH_FIELDS)}
    if params.condition:
        query["query.cond"] = escape_essie(params.condition)
    if params.intervention:
        query["query.intr"] = escape_essie(params.intervention)
    if params.location:
        query["query.locn"] = escape_essie(params.location)
    if params.sponsor:
        query["query.spons"] = escape_essie(params.sponsor)

    areas = []  # Essie AREA clauses: the patient's age, the study type
    if params.min_age is not None:
        areas.append(f"AREA[MinimumAge]RANGE[MIN, {params.min_age} years]")
    if params.max_age is not None:
        areas.append(f"AREA[MaximumAge]RANGE[{params.max_age} years, MAX]")
    if params.study_type:
        areas.append(f"AREA[StudyType]{params.study_type.capitalize()}")
    area_clause = " AND ".join(areas)
    keywords = escape_essie(params.eligibility_keywords) if params.eligibility_keywords else ""
    if keywords and area_clause:
        # Parenthesised so that "EGFR OR ALK" stays one operand of the AND.
        query["query.term"] = f"({keywords}) AND ({area_clause})"
    elif keywords or area_clause:
        query["query.term"] = keywords or area_clause

    agg = []
    if params.phase:
        agg.append("phase:" + " ".join(PHASE_CODES[p] for p in params.phase))
    if params.sex in SEX_CODES:
        agg.append(f"sex:{SEX_CODES[params.sex]}")
    if agg:
        query["aggFilters"] = ",".join(agg)
    if params.status:
        query["filter.overallStatus"] = ",".join(params.status)
    if page_token:
        query["pageToken"] = page_token
    return query


def _error_message(response: httpx.Response) -> str:
    """CT.gov's 400 body is documented as plain text; some clients have seen JSON."""
    return error_text(response, ("message", "error", "detail"), f"HTTP {response.status_code} with an empty body")


class ClinicalTrialsService(UpstreamClient):
    """Live trials source. Pass `transport` (e.g. `httpx.MockTransport`) to run without network."""

    def __init__(self, **options: Unpack[ClientOptions]) -> None:
        super().__init__(options, upstream=UPSTREAM, base_url=BASE_URL, limiter=shared_limiter,
                         headers={"Accept": "application/json"}, follow_redirects=True)  # 301: NCT id alias

    async def _get(self, path: str, params: dict[str, str]) -> httpx.Response:
        return await send(self._client, "GET", path, params=params, upstream=UPSTREAM,
                          limiter=self._limiter, policy=self._retry)

    def _json(self, response: httpx.Response) -> dict[str, Any]:
        return self._json_object(response)

    def _check(self, response: httpx.Response, what: str) -> None:
        if response.status_code == 400:
            raise InvalidInput(
                f"{UPSTREAM} rejected the {what}: {_error_message(response)}. Check the search text for "
                "unbalanced quotes or parentheses; a page_token from an older result set also expires."
            )
        if response.status_code >= 300:
            raise UpstreamError(
                f"{UPSTREAM} answered HTTP {response.status_code} to the {what}: {_error_message(response)}"
            )

    async def search_trials(self, params: TrialSearchParams) -> TrialSearchPage:
        token_state = decode_page_token(params.page_token) if params.page_token else {}
        upstream_token = token_state.get("t")
        if params.page_token and not isinstance(upstream_token, str):
            raise InvalidInput("page_token is not a token from a previous page; start again from page one")
        response = await self._get("/studies", build_search_query(params, page_token=upstream_token))
        self._check(response, "search")
        body = self._json(response)
        studies = [s for s in body.get("studies") or [] if isinstance(s, dict) and study_nct_id(s)]
        trials = [parse_summary(s) for s in studies]
        # totalCount only comes with the first page; later pages carry it in our token.
        total = body.get("totalCount")
        if not isinstance(total, int):
            total = token_state.get("n") if isinstance(token_state.get("n"), int) else len(trials)
        next_token = body.get("nextPageToken")
        return TrialSearchPage(
            trials=trials,
            total_count=total,
            next_page_token=encode_page_token({"t": next_token, "n": total}) if next_token else None,
        )

    async def sample_studies(self, params: TrialSearchParams, fields: Sequence[str], limit: int,
                             ) -> tuple[int, list[dict[str, Any]]]:
        """(total matches, the first `limit` studies projected to `fields`): one request per 1,000 studies."""
        studies: list[dict[str, Any]] = []
        total: int | None = None
        token: str | None = None
        while len(studies) < limit:
            query = build_search_query(params, page_token=token) | {
                "fields": ",".join(fields), "pageSize": str(min(MAX_STATS_PAGE_SIZE, limit - len(studies)))}
            response = await self._get("/studies", query)
            self._check(response, "search")
            body = self._json(response)
            if total is None:
                total = body.get("totalCount") if isinstance(body.get("totalCount"), int) else None
            studies += [s for s in body.get("studies") or [] if isinstance(s, dict) and study_nct_id(s)]
            token = body.get("nextPageToken") if isinstance(body.get("nextPageToken"), str) else None
            if not token:
                break
        return (total if total is not None else len(studies)), studies[:limit]

    async def get_trial_by_nct_id(self, nct_id: str) -> TrialDetail:
        nct_id = checked_nct_id(nct_id)
        response = await self._get(f"/studies/{nct_id}", {"format": "json"})
        if response.status_code == 404:
            raise NotFound(f"No trial {nct_id} on {UPSTREAM}")
        self._check(response, f"request for {nct_id}")
        return parse_study(self._json(response))

    async def get_trials_by_nct_ids(self, nct_ids: Sequence[str]) -> list[TrialDetail]:
        """Full records in the order asked; ids CT.gov does not know are left out."""
        wanted = list(dict.fromkeys(checked_nct_id(i) for i in nct_ids))
        found: dict[str, TrialDetail] = {}
        for start in range(0, len(wanted), MAX_PAGE_SIZE):
            chunk = wanted[start:start + MAX_PAGE_SIZE]
            query = {"filter.ids": ",".join(chunk), "pageSize": str(len(chunk)), "format": "json"}
            response = await self._get("/studies", query)
            self._check(response, "request for several trials")
            for study in self._json(response).get("studies") or []:
                if isinstance(study, dict) and study_nct_id(study):
                    trial = parse_study(study)
                    found[trial.nct_id] = trial
        return [found[i] for i in wanted if i in found]

