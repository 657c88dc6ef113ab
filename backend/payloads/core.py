"""Payload types of the research stream editor (page `edit_research_stream`, app `kh`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from backend.registry import Omitted, payload_type


@payload_type(
    "schema_proposal", "Proposed changes to a research stream's semantic definition", marker="SCHEMA_PROPOSAL:",
    suggestion=True, when="when the user asks for recommendations on the stream's definition (its name, and a "
    "description that states its purpose, topics and entities); Accept puts them in the editor:")
class SchemaProposal(BaseModel):
    proposed_changes: dict[str, Any] = Field(min_length=1, examples=[{"name": "...", "description": "..."}])
    confidence: Literal["high", "medium", "low"] | Omitted = None
    reasoning: str = Field(description="why these changes")


@payload_type(
    "validation_results", "A check of the stream's definition: issues and suggestions",
    marker="VALIDATION_RESULTS:", when="when the user asks you to check or review the stream definition:")
class ValidationResults(BaseModel):
    errors: list[str] | Omitted = None
    warnings: list[str] | Omitted = None
    suggestions: list[str] | Omitted = None


@payload_type(
    "retrieval_proposal", "Proposed retrieval setup (queries per source) for a stream", marker="RETRIEVAL_PROPOSAL:",
    suggestion=True, when="when the user asks how to retrieve articles/trials for the stream (Accept makes them "
    "the stream's default PubMed query and trial search; trial_search takes TrialScout's fields):")
class RetrievalProposal(BaseModel):
    pubmed_query: str | Omitted = None
    trial_search: dict[str, Any] | Omitted = Field(None, examples=[{"condition": "...", "intervention": "..."}])
    reasoning: str


@payload_type(
    "query_suggestion", "A suggested PubMed query for the stream's workbench", marker="QUERY_SUGGESTION:",
    suggestion=True, when="when the user wants a better or new search query in the workbench:")
class QuerySuggestion(BaseModel):
    query: str = Field(min_length=1, description="PubMed query string")
    explanation: str | Omitted = Field(None, description="what it finds")


@payload_type(
    "filter_suggestion", "A filter to apply to the workbench results", marker="FILTER_SUGGESTION:", suggestion=True,
    when="when the user wants to narrow the loaded results table by a field:",
    notes="Fields on Tablizer and the workbench: year, journal, publication_type, mesh. On TrialScout: phase (e.g. "
    "PHASE3), status (e.g. RECRUITING), study_type, sponsor, enrollment, start_year, condition, intervention.")
class FilterSuggestion(BaseModel):
    field: str = Field(description="year|journal|publication_type|mesh")
    operator: Literal["equals", "contains", "gte", "lte"]
    value: str | float
    explanation: str | Omitted = None


@payload_type(
    "chat_instructions_suggestion", "Proposed chat instructions for the stream (Accept fills the instructions "
    "editor)", marker="CHAT_INSTRUCTIONS:", suggestion=True,
    when="when the admin asks you to draft or improve the stream's chat instructions (how the assistant should "
    "behave inside this stream):")
class ChatInstructionsSuggestion(BaseModel):
    instructions: str = Field(min_length=1, max_length=8000, description="the full proposed text")
    explanation: str | Omitted = Field(None, description="what changed and why")
