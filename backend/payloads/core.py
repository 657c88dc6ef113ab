"""Payload types of the research stream editor (page `edit_research_stream`, app `kh`)."""

from __future__ import annotations

from backend.registry import PayloadType, register_payload_type

register_payload_type(PayloadType(
    name="schema_proposal",
    description="Proposed changes to a research stream's semantic definition",
    source="llm",
    parse_marker="SCHEMA_PROPOSAL:",
    llm_instructions="""SCHEMA_PROPOSAL - when the user asks for recommendations on the stream's definition \
(its name, and a description that states its purpose, topics and entities); Accept puts them in the editor:
SCHEMA_PROPOSAL: {"proposed_changes": {"name": "...", "description": "..."}, "confidence": "high|medium|low", \
"reasoning": "why these changes"}""",
    schema={"type": "object", "required": ["proposed_changes", "reasoning"], "properties": {
        "proposed_changes": {"type": "object", "minProperties": 1},
        "confidence": {"enum": ["high", "medium", "low"]},
        "reasoning": {"type": "string"}}},
))

register_payload_type(PayloadType(
    name="validation_results",
    description="A check of the stream's definition: issues and suggestions",
    source="llm",
    parse_marker="VALIDATION_RESULTS:",
    llm_instructions="""VALIDATION_RESULTS - when the user asks you to check or review the stream definition:
VALIDATION_RESULTS: {"errors": ["..."], "warnings": ["..."], "suggestions": ["..."]}""",
    schema={"type": "object", "properties": {
        "errors": {"type": "array", "items": {"type": "string"}},
        "warnings": {"type": "array", "items": {"type": "string"}},
        "suggestions": {"type": "array", "items": {"type": "string"}}}},
))

register_payload_type(PayloadType(
    name="retrieval_proposal",
    description="Proposed retrieval setup (queries per source) for a stream",
    source="llm",
    parse_marker="RETRIEVAL_PROPOSAL:",
    llm_instructions="""RETRIEVAL_PROPOSAL - when the user asks how to retrieve articles/trials for the stream \
(Accept makes them the stream's default PubMed query and trial search; trial_search takes TrialScout's fields):
RETRIEVAL_PROPOSAL: {"pubmed_query": "...", "trial_search": {"condition": "...", "intervention": "..."}, \
"reasoning": "..."}""",
    schema={"type": "object", "required": ["reasoning"], "properties": {
        "pubmed_query": {"type": "string"},
        "trial_search": {"type": "object"},
        "reasoning": {"type": "string"}}},
))

register_payload_type(PayloadType(
    name="query_suggestion",
    description="A suggested PubMed query for the stream's workbench",
    source="llm",
    parse_marker="QUERY_SUGGESTION:",
    llm_instructions="""QUERY_SUGGESTION - when the user wants a better or new search query in the workbench:
QUERY_SUGGESTION: {"query": "PubMed query string", "explanation": "what it finds"}""",
    schema={"type": "object", "required": ["query"], "properties": {
        "query": {"type": "string", "minLength": 1}, "explanation": {"type": "string"}}},
))

register_payload_type(PayloadType(
    name="filter_suggestion",
    description="A filter to apply to the workbench results",
    source="llm",
    parse_marker="FILTER_SUGGESTION:",
    llm_instructions="""FILTER_SUGGESTION - when the user wants to narrow the loaded results table by a field:
FILTER_SUGGESTION: {"field": "year|journal|publication_type|mesh", "operator": "equals|contains|gte|lte", \
"value": "...", "explanation": "..."}
Fields on Tablizer and the workbench: year, journal, publication_type, mesh. On TrialScout: phase (e.g. PHASE3), \
status (e.g. RECRUITING), study_type, sponsor, enrollment, start_year, condition, intervention.""",
    schema={"type": "object", "required": ["field", "operator", "value"], "properties": {
        "field": {"type": "string"}, "operator": {"enum": ["equals", "contains", "gte", "lte"]},
        "value": {"type": ["string", "number"]}, "explanation": {"type": "string"}}},
))

register_payload_type(PayloadType(
    name="chat_instructions_suggestion",
    description="Proposed chat instructions for the stream (Accept fills the instructions editor)",
    source="llm",
    parse_marker="CHAT_INSTRUCTIONS:",
    llm_instructions="""CHAT_INSTRUCTIONS - when the admin asks you to draft or improve the stream's chat \
instructions (how the assistant should behave inside this stream):
CHAT_INSTRUCTIONS: {"instructions": "the full proposed text", "explanation": "what changed and why"}""",
    schema={"type": "object", "required": ["instructions"], "properties": {
        "instructions": {"type": "string", "minLength": 1, "maxLength": 8000},
        "explanation": {"type": "string"}}},
))
