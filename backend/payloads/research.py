"""Payload types of Tablizer and TrialScout (spec: tablizer-trialscout-chat-integration.md, "Payloads")."""

from __future__ import annotations

from typing import get_args

from backend.registry import PayloadType, register_payload_type
from backend.sources.models import OverallStatus, Phase

PHASES = list(get_args(Phase))
STATUSES = ["RECRUITING", "ACTIVE_NOT_RECRUITING", "COMPLETED", "NOT_YET_RECRUITING", "TERMINATED", "WITHDRAWN",
            "SUSPENDED", "ENROLLING_BY_INVITATION"]
assert set(STATUSES) <= set(get_args(OverallStatus))

register_payload_type(PayloadType(
    name="pubmed_query_suggestion",
    description="Suggested PubMed query for Tablizer",
    source="llm",
    parse_marker="PUBMED_QUERY:",
    llm_instructions="""PUBMED_QUERY - Use when the user asks to search for articles or build a query:

PUBMED_QUERY: {"query": "The PubMed query string", "explanation": "What this query searches for", \
"date_start": "YYYY-MM-DD (optional)", "date_end": "YYYY-MM-DD (optional)"}

Use MeSH terms with free-text synonyms, grouped with parentheses, AND/OR in capitals. Example:
User: "Find EGFR resistance articles in lung cancer"
PUBMED_QUERY: {"query": "(EGFR[MeSH] OR \\"epidermal growth factor receptor\\") AND (drug resistance[MeSH] OR \
resistant) AND (lung neoplasms[MeSH] OR NSCLC)", "explanation": "EGFR-related resistance in lung cancer, using \
MeSH terms for better coverage"}""",
    schema={"type": "object", "required": ["query"], "additionalProperties": False, "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 2000},
        "explanation": {"type": "string"},
        "date_start": {"type": "string", "pattern": r"^\d{4}(-\d{2}(-\d{2})?)?$"},
        "date_end": {"type": "string", "pattern": r"^\d{4}(-\d{2}(-\d{2})?)?$"}}},
))

register_payload_type(PayloadType(
    name="trial_search_suggestion",
    description="Suggested trial search parameters for TrialScout",
    source="llm",
    parse_marker="TRIAL_SEARCH:",
    llm_instructions=f"""TRIAL_SEARCH - Use when the user asks to search for clinical trials:

TRIAL_SEARCH: {{"condition": "condition to search", "intervention": "intervention/drug to search", \
"phase": ["PHASE2", "PHASE3"], "status": ["RECRUITING", "ACTIVE_NOT_RECRUITING"], "explanation": "What this \
search will find"}}

All fields except explanation are optional: condition, intervention, sponsor, phase, status, location, \
sex (ALL, FEMALE, MALE), study_type (INTERVENTIONAL, OBSERVATIONAL), min_age and max_age (years, the \
patient's age), eligibility_keywords. Only include \
fields the user specified or that are clearly implied.
Phase values: {", ".join(PHASES)}
Status values: {", ".join(STATUSES)}

Example:
User: "Find Phase 3 immunotherapy trials for NSCLC"
TRIAL_SEARCH: {{"condition": "non-small cell lung cancer", "intervention": "immunotherapy OR checkpoint \
inhibitor OR PD-1 OR PD-L1", "phase": ["PHASE3"], "status": ["RECRUITING", "ACTIVE_NOT_RECRUITING"], \
"explanation": "Phase 3 immunotherapy trials for NSCLC that are currently active"}}""",
    schema={"type": "object", "required": ["explanation"], "additionalProperties": False, "properties": {
        "condition": {"type": "string"}, "intervention": {"type": "string"}, "sponsor": {"type": "string"},
        "phase": {"type": "array", "items": {"enum": PHASES}, "uniqueItems": True},
        "status": {"type": "array", "items": {"enum": STATUSES}, "uniqueItems": True},
        "location": {"type": "string"}, "sex": {"enum": ["ALL", "FEMALE", "MALE"]},
        "study_type": {"enum": ["INTERVENTIONAL", "OBSERVATIONAL"]},
        "min_age": {"type": "integer", "minimum": 0, "maximum": 120},
        "max_age": {"type": "integer", "minimum": 0, "maximum": 120},
        "eligibility_keywords": {"type": "string"},
        "explanation": {"type": "string"}}},
))

register_payload_type(PayloadType(
    name="ai_column_suggestion",
    description="Suggested AI column for filtering/analysis",
    source="llm",
    parse_marker="AI_COLUMN:",
    llm_instructions="""AI_COLUMN - Use when the user wants to filter or categorize the loaded results:

AI_COLUMN: {"name": "Column display name", "criteria": "The criteria prompt for the AI to evaluate", \
"type": "boolean", "explanation": "What this column will help identify"}

Type is "boolean" for yes/no filtering, "text" for open-ended extraction. Examples:
User: "I only want trials that allow brain metastases"
AI_COLUMN: {"name": "Allows Brain Mets", "criteria": "Based on the eligibility criteria, does this trial allow \
patients with brain metastases? Consider both inclusion and exclusion criteria.", "type": "boolean", \
"explanation": "Identifies trials that accept patients with brain metastases; filter to Yes to keep them"}
User: "Add a column for the primary endpoint"
AI_COLUMN: {"name": "Primary Endpoint", "criteria": "What is the primary endpoint of this trial? Summarize in a \
few words (e.g., 'Overall Survival', 'Progression-Free Survival', 'ORR').", "type": "text", "explanation": \
"Extracts the primary endpoint of each trial so you can compare them"}""",
    schema={"type": "object", "required": ["name", "criteria", "type"], "additionalProperties": False,
            "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 80,
                                    "pattern": "^ *[^ =+@\t\r\n-]"},  # not a spreadsheet formula
                           "criteria": {"type": "string", "minLength": 1, "maxLength": 2000},
                           "type": {"enum": ["boolean", "text"]},
                           "explanation": {"type": "string"}}},
))

register_payload_type(PayloadType(
    name="trial_details",
    description="Full details of one clinical trial (from get_trial)",
    source="tool",
    schema={"type": "object", "required": ["nct_id", "title"]},
))

register_payload_type(PayloadType(
    name="trial_search_results",
    description="A page of ClinicalTrials.gov search results (from search_trials)",
    source="tool",
    schema={"type": "object", "required": ["trials", "total_count"]},
))

register_payload_type(PayloadType(
    name="pubmed_search_results",
    description="Results from a PubMed search query",
    source="tool",
    is_global=True,
    schema={"type": "object", "required": ["query", "articles", "total_count"]},
))
