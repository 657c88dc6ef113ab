"""Typed records and search parameters shared by the live and offline sources.

Parameters are validated here, so a bad value fails before any request with a pydantic
`ValidationError`; the HTTP layer turns it into a 422. Records are parsed from real
ClinicalTrials.gov v2 JSON and PubMed XML, where almost every field may be missing, so most
record fields are optional.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from backend.errors import InvalidInput

Phase = Literal["EARLY_PHASE1", "PHASE1", "PHASE2", "PHASE3", "PHASE4", "NA"]
OverallStatus = Literal[
    "RECRUITING", "ACTIVE_NOT_RECRUITING", "COMPLETED", "NOT_YET_RECRUITING", "TERMINATED",
    "WITHDRAWN", "SUSPENDED", "ENROLLING_BY_INVITATION", "UNKNOWN",
    # Expanded-access records use their own statuses.
    "AVAILABLE", "NO_LONGER_AVAILABLE", "TEMPORARILY_NOT_AVAILABLE", "APPROVED_FOR_MARKETING", "WITHHELD",
]
Sex = Literal["ALL", "FEMALE", "MALE"]
StudyType = Literal["INTERVENTIONAL", "OBSERVATIONAL"]

# What the search fields accept beyond their length, stated in the API document (the grammar itself can't be
# a JSON schema): malformed syntax or a search over these bounds is a 422 naming what to change.
QUERY_RULES = ("Search syntax: words, \"quoted phrases\", word* prefixes (at least 3 letters, at most 6 in a "
               "search), AND / OR / NOT, parentheses (balanced, at most 12 deep), [field] tags; at most 40 terms in "
               "a search. Malformed or larger searches are refused (422) with what to change.")
NCT_ID = re.compile(r"^NCT0*([1-9]\d{0,7})$", re.IGNORECASE)
NCT_ID_PATTERN = "^[Nn][Cc][Tt]0*[1-9][0-9]{0,7}$"  # NCT_ID for the API document (which has no flags)
PMID = re.compile(r"^[1-9]\d{0,9}$")


def normalize_nct_id(value: str) -> str:
    """'nct1234' -> 'NCT00001234'; raises ValueError for anything that is not an NCT id."""
    match = NCT_ID.match(value.strip())
    if not match:
        raise ValueError(f"{value!r} is not an NCT id (expected NCT followed by 8 digits, e.g. NCT04613596)")
    return f"NCT{int(match.group(1)):08d}"


def normalize_pmid(value: str | int) -> str:
    text = str(value).strip()
    if not PMID.match(text):
        raise ValueError(f"{value!r} is not a PubMed id (expected digits only, e.g. 22663011)")
    return text


def checked_nct_id(value: str) -> str:
    """`normalize_nct_id` for ids arriving from callers: a malformed id is the caller's 422."""
    try:
        return normalize_nct_id(value)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from exc


def checked_pmid(value: str | int) -> str:
    try:
        return normalize_pmid(value)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from exc


class _Params(BaseModel):
    # Unknown keys are mistakes (a typo in a tool call or query string), so they fail loudly.
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, frozen=True)


class TrialSearchParams(_Params):
    """One ClinicalTrials.gov search. Free-text fields accept Essie-style AND/OR/NOT and quotes."""

    condition: str | None = Field(None, max_length=500, description="Disease or condition (query.cond)")
    intervention: str | None = Field(None, max_length=500, description="Drug, device, procedure (query.intr)")
    sponsor: str | None = Field(None, max_length=200, description="Lead sponsor or collaborator")
    eligibility_keywords: str | None = Field(None, max_length=500, description="Free text (query.term)")
    phase: list[Phase] = Field(default_factory=list)
    status: list[OverallStatus] = Field(default_factory=list, description="Empty means any status")
    location: str | None = Field(None, max_length=200, description="Facility, city, state or country")
    sex: Sex | None = Field(None, description="Sex of the patient; ALL means no filter")
    study_type: StudyType | None = Field(None, description="INTERVENTIONAL (treatments tested) or OBSERVATIONAL")
    min_age: int | None = Field(None, ge=0, le=120, description="Patient age lower bound, years")
    max_age: int | None = Field(None, ge=0, le=120, description="Patient age upper bound, years")
    page_size: int = Field(10, ge=1, le=100)
    page_token: str | None = Field(None, max_length=2000, description="next_page_token of the previous page")

    @field_validator("condition", "intervention", "sponsor", "eligibility_keywords", "location", "page_token")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        return value or None

    @field_validator("study_type", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @field_validator("phase", "status")
    @classmethod
    def _dedupe(cls, values: list[str]) -> list[str]:
        return list(dict.fromkeys(values))

    @model_validator(mode="after")
    def _ages_ordered(self) -> TrialSearchParams:
        if self.min_age is not None and self.max_age is not None and self.min_age > self.max_age:
            raise ValueError(f"min_age ({self.min_age}) must not be greater than max_age ({self.max_age})")
        return self


class Outcome(BaseModel):
    measure: str
    description: str | None = None
    time_frame: str | None = None


class Arm(BaseModel):
    label: str
    type: str | None = None
    description: str | None = None
    interventions: list[str] = Field(default_factory=list)


class Location(BaseModel):
    facility: str | None = None
    city: str | None = None
    state: str | None = None
    country: str | None = None
    zip: str | None = None
    status: str | None = None
    lat: float | None = None
    lon: float | None = None


class TrialSummary(BaseModel):
    """A table row: what TrialScout lists and what a search tool shows the model."""

    nct_id: str
    title: str
    phase: list[Phase] = Field(default_factory=list, description="e.g. ['PHASE1', 'PHASE2']; [] if none")
    status: str | None = None
    study_type: str | None = None
    conditions: list[str] = Field(default_factory=list)
    interventions: list[str] = Field(default_factory=list)
    sponsor: str | None = None
    enrollment: int | None = None
    start_date: str | None = Field(None, description="Partial ISO date as registered: yyyy[-MM[-dd]]")
    completion_date: str | None = None
    locations_count: int = 0
    snapshot_date: str | None = Field(
        None, description="Offline corpus: the date this record (and its status) was copied; None when live")

    @property
    def url(self) -> str:
        return f"https://clinicaltrials.gov/study/{self.nct_id}"


class TrialDetail(TrialSummary):
    official_title: str | None = None
    acronym: str | None = None
    brief_summary: str | None = None
    detailed_description: str | None = None
    eligibility_criteria: str | None = Field(None, description="Markdown text as registered")
    minimum_age: str | None = Field(None, description="As registered, e.g. '18 Years'; None means no limit")
    maximum_age: str | None = None
    sex: Sex | None = None
    healthy_volunteers: bool | None = None
    std_ages: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    collaborators: list[str] = Field(default_factory=list)
    sponsor_class: str | None = Field(None, description="Lead sponsor class, e.g. INDUSTRY, NIH, OTHER")
    intervention_types: list[str] = Field(default_factory=list, description="e.g. DRUG, DEVICE, BEHAVIORAL")
    condition_mesh_terms: list[str] = Field(default_factory=list)
    intervention_mesh_terms: list[str] = Field(default_factory=list)
    primary_outcomes: list[Outcome] = Field(default_factory=list)
    secondary_outcomes: list[Outcome] = Field(default_factory=list)
    arms: list[Arm] = Field(default_factory=list)
    locations: list[Location] = Field(default_factory=list)
    has_results: bool = False
    last_update_date: str | None = None

    def to_summary(self) -> TrialSummary:
        return TrialSummary.model_validate(self.model_dump(include=set(TrialSummary.model_fields)))


class TrialSearchPage(BaseModel):
    trials: list[TrialSummary]
    total_count: int = Field(description="All matches of the search, not just this page")
    next_page_token: str | None = None


class ArticleSearchParams(_Params):
    """One PubMed search; `query` is PubMed syntax (AND/OR/NOT, quotes, [field] tags)."""

    query: str = Field(min_length=1, max_length=2000)
    date_start: date | None = Field(None, description="Publication date from (inclusive)")
    date_end: date | None = Field(None, description="Publication date to (inclusive)")
    sort: Literal["relevance", "date"] = "relevance"
    page: int = Field(1, ge=1)
    page_size: int = Field(20, ge=1, le=100)

    @model_validator(mode="after")
    def _check(self) -> ArticleSearchParams:
        if self.date_start and self.date_end and self.date_start > self.date_end:
            raise ValueError(f"date_start ({self.date_start}) is after date_end ({self.date_end})")
        # PubMed's esearch cannot page past the 10,000th hit; say so here rather than upstream.
        if self.page * self.page_size > 10_000:
            raise ValueError("PubMed only pages through the first 10,000 results; narrow the query or dates")
        return self


class AbstractSection(BaseModel):
    label: str | None = None
    text: str


class Article(BaseModel):
    pmid: str
    title: str
    abstract: str = Field("", description="Plain text; structured sections as 'LABEL: text' lines")
    abstract_sections: list[AbstractSection] = Field(default_factory=list)
    authors: list[str] = Field(default_factory=list, description="'Lastname Initials' or a group name")
    journal: str | None = None
    journal_abbrev: str | None = None
    volume: str | None = None
    issue: str | None = None
    pages: str | None = None
    year: int | None = None
    pub_date: str | None = Field(None, description="Partial ISO date: yyyy, yyyy-MM or yyyy-MM-dd")
    mesh_terms: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    doi: str | None = None
    pmcid: str | None = None
    nct_ids: list[str] = Field(default_factory=list, description="Linked trials (DataBankList + text)")
    publication_types: list[str] = Field(default_factory=list)
    snapshot_date: str | None = Field(None, description="Offline corpus: when this record was copied; None when live")

    @property
    def url(self) -> str:
        return f"https://pubmed.ncbi.nlm.nih.gov/{self.pmid}/"


class ArticleSummary(BaseModel):
    """The lighter esummary record: no abstract, no MeSH."""

    pmid: str
    title: str
    authors: list[str] = Field(default_factory=list)
    journal: str | None = None
    pub_date: str | None = Field(None, description="As PubMed displays it, e.g. '2021 Sep'")
    year: int | None = None
    doi: str | None = None
    publication_types: list[str] = Field(default_factory=list)


class ArticleSearchPage(BaseModel):
    articles: list[Article]
    total_count: int
    query_translation: str | None = Field(None, description="The query as the backend ran it")
    page: int
    page_size: int
