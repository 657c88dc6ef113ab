"""Payload types of Tablizer and TrialScout (spec: tablizer-trialscout-chat-integration.md, "Payloads")."""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from backend.registry import Omitted, payload_type
from backend.sources.models import OverallStatus, Phase, TrialDetail, TrialSummary

SuggestedStatus = Literal["RECRUITING", "ACTIVE_NOT_RECRUITING", "COMPLETED", "NOT_YET_RECRUITING", "TERMINATED",
                          "WITHDRAWN", "SUSPENDED", "ENROLLING_BY_INVITATION"]
PHASES = list(get_args(Phase))
STATUSES = list(get_args(SuggestedStatus))
assert set(STATUSES) <= set(get_args(OverallStatus))

DatePrefix = Annotated[str, Field(pattern=r"^\d{4}(-\d{2}(-\d{2})?)?$")]
Age = Annotated[int, Field(ge=0, le=120)]


@payload_type(
    "pubmed_query_suggestion", "Suggested PubMed query for Tablizer", marker="PUBMED_QUERY:", suggestion=True,
    when="Use when the user asks to search for articles or build a query:",
    notes="""Use MeSH terms with free-text synonyms, grouped with parentheses, AND/OR in capitals. Example:
User: "Find EGFR resistance articles in lung cancer"
PUBMED_QUERY: {"query": "(EGFR[MeSH] OR \\"epidermal growth factor receptor\\") AND (drug resistance[MeSH] OR \
resistant) AND (lung neoplasms[MeSH] OR NSCLC)", "explanation": "EGFR-related resistance in lung cancer, using \
MeSH terms for better coverage"}""")
class PubMedQuerySuggestion(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=2000, description="The PubMed query string")
    explanation: str | Omitted = Field(None, description="What this query searches for")
    date_start: DatePrefix | Omitted = Field(None, description="YYYY-MM-DD (optional)")
    date_end: DatePrefix | Omitted = Field(None, description="YYYY-MM-DD (optional)")


@payload_type(
    "trial_search_suggestion", "Suggested trial search parameters for TrialScout", marker="TRIAL_SEARCH:",
    suggestion=True, when="Use when the user asks to search for clinical trials:",
    notes=f"""All fields except explanation are optional; include only fields the user specified or that are \
clearly implied. min_age and max_age are the patient's age in years.
Phase values: {", ".join(PHASES)}
Status values: {", ".join(STATUSES)}

Example:
User: "Find Phase 3 immunotherapy trials for NSCLC"
TRIAL_SEARCH: {{"condition": "non-small cell lung cancer", "intervention": "immunotherapy OR checkpoint \
inhibitor OR PD-1 OR PD-L1", "phase": ["PHASE3"], "status": ["RECRUITING", "ACTIVE_NOT_RECRUITING"], \
"explanation": "Phase 3 immunotherapy trials for NSCLC that are currently active"}}""")
class TrialSearchSuggestion(BaseModel):
    model_config = ConfigDict(extra="forbid")
    condition: str | Omitted = Field(None, description="condition to search")
    intervention: str | Omitted = Field(None, description="intervention/drug to search")
    sponsor: str | Omitted = Field(None, description="sponsor name")
    phase: Annotated[list[Phase], Field(json_schema_extra={"uniqueItems": True})] | Omitted = Field(
        None, examples=[["PHASE2", "PHASE3"]])
    status: Annotated[list[SuggestedStatus], Field(json_schema_extra={"uniqueItems": True})] | Omitted = Field(
        None, examples=[["RECRUITING", "ACTIVE_NOT_RECRUITING"]])
    location: str | Omitted = Field(None, description="country, state or city")
    sex: Literal["ALL", "FEMALE", "MALE"] | Omitted = None
    study_type: Literal["INTERVENTIONAL", "OBSERVATIONAL"] | Omitted = None
    min_age: Age | Omitted = Field(None, examples=[18])
    max_age: Age | Omitted = Field(None, examples=[75])
    eligibility_keywords: str | Omitted = Field(None, description="words the eligibility criteria contain")
    explanation: str = Field(description="What this search will find")


@payload_type(
    "ai_column_suggestion", "Suggested AI column for filtering/analysis", marker="AI_COLUMN:", suggestion=True,
    when="Use when the user wants to filter or categorize the loaded results:",
    notes="""Type is "boolean" for yes/no filtering, "text" for open-ended extraction. Examples:
User: "I only want trials that allow brain metastases"
AI_COLUMN: {"name": "Allows Brain Mets", "criteria": "Based on the eligibility criteria, does this trial allow \
patients with brain metastases? Consider both inclusion and exclusion criteria.", "type": "boolean", \
"explanation": "Identifies trials that accept patients with brain metastases; filter to Yes to keep them"}
User: "Add a column for the primary endpoint"
AI_COLUMN: {"name": "Primary Endpoint", "criteria": "What is the primary endpoint of this trial? Summarize in a \
few words (e.g., 'Overall Survival', 'Progression-Free Survival', 'ORR').", "type": "text", "explanation": \
"Extracts the primary endpoint of each trial so you can compare them"}""")
class AIColumnSuggestion(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=80, pattern=r"^ *[^ =+@\t\r\n-]",
                      description="Column display name (never a spreadsheet formula)")
    criteria: str = Field(min_length=1, max_length=2000, description="The criteria prompt for the AI to evaluate")
    type: Literal["boolean", "text"] = Field(examples=["boolean"])
    explanation: str | Omitted = Field(None, description="What this column will help identify")


payload_type("trial_details", "Full details of one clinical trial (from get_trial)")(TrialDetail)


@payload_type("trial_search_results", "A page of ClinicalTrials.gov search results (from search_trials)")
class TrialSearchResults(BaseModel):
    params: dict[str, Any]  # the search as run (its fields set)
    total_count: int
    next_page_token: str | None
    trials: list[TrialSummary]


class ArticleBrief(BaseModel):
    """An article as a search result card lists it."""

    pmid: str
    title: str
    authors: list[str]
    journal: str | None
    year: int | None
    doi: str | None


@payload_type("pubmed_search_results", "Results from a PubMed search query", is_global=True)
class PubMedSearchResults(BaseModel):
    query: str
    total_count: int
    query_translation: str | None
    articles: list[ArticleBrief]
