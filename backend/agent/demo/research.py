"""The demo model on Tablizer and TrialScout: queries, search forms, AI columns, look-ups and analysis.

It answers only from what the request carries: the page context of the turn's user message, tool results in
the messages. Counts are computed from the staged items it reads with `get_staged_items`.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from backend.agent.demo.brain import DemoRequest, intent, marker_json
from backend.agent.demo.general import stream_note, suggestions
from backend.agent.demo.vocabulary import concepts_in, leftover_terms, phases_in, statuses_in
from backend.agent.demo.wire import Reply

NCT = re.compile(r"\bNCT\d{8}\b", re.I)
PMID = re.compile(r"\bPMID:?\s*(\d{4,9})\b", re.I)
FIND = re.compile(r"\b(find|search|show|look(ing)? for|get|list|want|need|build|write|suggest)\b", re.I)
ANALYSE = re.compile(r"\b(most common|how many|distribution|breakdown|count|which (phase|year|journal)s?)\b", re.I)
TRIALSCOUT_SUGGESTIONS = [
    {"label": "Phase 3 NSCLC immunotherapy", "value": "Find Phase 3 immunotherapy trials for NSCLC"},
    {"label": "Most common phase?", "value": "What's the most common phase among these?"},
    {"label": "Primary endpoint column", "value": "Add a column for the primary endpoint"},
]
TABLIZER_SUGGESTIONS = [
    {"label": "EGFR resistance query", "value": "Find EGFR resistance articles"},
    {"label": "Most common year?", "value": "What's the most common year among these?"},
    {"label": "Resistance column", "value": "Add a column that flags articles about drug resistance"},
]


def _page_suggestions(req: DemoRequest) -> str:
    if req.page == "trialscout":
        return suggestions(TRIALSCOUT_SUGGESTIONS)
    if req.page == "tablizer":
        return suggestions(TABLIZER_SUGGESTIONS)
    return suggestions()


# -- guide: cards ---------------------------------------------------------------------------------------

@intent(priority=300)
def trial_search_card(req: DemoRequest) -> Reply | None:
    text = req.user_text
    if not req.offers_marker("TRIAL_SEARCH:") or not FIND.search(text) or not re.search(r"\btrials?\b", text, re.I):
        return None
    concepts = concepts_in(text)
    conditions = [c.label for c in concepts if c.kind == "condition"]
    interventions = [c.label for c in concepts if c.kind == "intervention"]
    suggestion: dict[str, Any] = {}
    if conditions:
        suggestion["condition"] = " OR ".join(conditions)
    else:
        match = re.search(r"\b(?:for|in|on)\s+([a-z0-9 \-']{3,60}?)(?:\s+(?:that|which|with|in|recruiting)\b|[?.!]|$)",
                          text, re.I)
        if match:
            suggestion["condition"] = match.group(1).strip()
    if interventions:
        suggestion["intervention"] = " OR ".join(interventions)
    if phases := phases_in(text):
        suggestion["phase"] = phases
    suggestion["status"] = statuses_in(text) or ["RECRUITING", "ACTIVE_NOT_RECRUITING"]
    if len(suggestion) == 1:
        return None  # nothing but a default status: not enough to fill a form honestly
    described = ", ".join(f"{k.replace('_', ' ')}: {' / '.join(v) if isinstance(v, list) else v}"
                          for k, v in suggestion.items())
    suggestion["explanation"] = f"Trials matching {described}."
    return Reply.text("Here's a trial search for that; Accept fills the form and runs it.\n\n"
                      + marker_json("TRIAL_SEARCH:", suggestion) + _page_suggestions(req))


@intent(priority=310)
def pubmed_query_card(req: DemoRequest) -> Reply | None:
    text = req.user_text
    wants_articles = re.search(r"\b(articles?|papers?|literature|publications?|query|pubmed)\b", text, re.I)
    if not req.offers_marker("PUBMED_QUERY:") or not FIND.search(text) or not wants_articles:
        return None
    concepts = concepts_in(text)
    clauses = [c.pubmed for c in concepts]
    extra = leftover_terms(text, concepts)
    clauses += [f"{word}[tiab]" for word in extra[:4]]
    if not clauses:
        return None
    query = " AND ".join(clauses)
    covered = ", ".join([c.label for c in concepts] + extra[:4])
    data = {"query": query, "explanation": f"Searches for {covered}, combining MeSH headings with free-text "
                                           "synonyms so older and newly indexed articles are both found."}
    return Reply.text("Here's a PubMed query for that. Accept puts it in the search box and runs it.\n\n"
                      + marker_json("PUBMED_QUERY:", data) + _page_suggestions(req))


@intent(priority=320)
def ai_column_card(req: DemoRequest) -> Reply | None:
    text = req.user_text.strip().rstrip("?.!")
    if not req.offers_marker("AI_COLUMN:"):
        return None
    noun = "trial" if req.page == "trialscout" else "article"
    column = re.search(r"\b(?:add|create|make)\b.*?\bcolumn\b\s*(?:for|with|showing|that shows|of)?\s*(?:the\s+)?(.+)",
                       text, re.I)
    only = re.search(r"\b(?:only|just)\s+(?:want\s+)?(?:the\s+)?(?:trials?|articles?|studies|ones)\s+(?:that|which|"
                     r"where|with)\s+(.+)", text, re.I)
    flags = re.search(r"\bcolumn\s+that\s+(?:flags|marks|shows whether)\s+(?:\w+\s+)?(?:about\s+)?(.+)", text, re.I)
    if flags:
        topic = flags.group(1)
        data = {"name": _title(f"About {topic}")[:40], "type": "boolean",
                "criteria": f"Is this {noun} about {topic}? Answer from the title, abstract and keywords.",
                "explanation": f"Flags {noun}s about {topic}; filter to Yes to keep them."}
    elif only:
        condition = only.group(1)
        data = _boolean_column(condition, noun)
    elif column:
        subject = column.group(1)
        data = {"name": _title(subject)[:40], "type": "text",
                "criteria": f"What is the {subject} of this {noun}? Summarize in a few words.",
                "explanation": f"Extracts the {subject} of each {noun} so you can compare them side by side."}
    else:
        return None
    return Reply.text(f"An AI column can check that for every {noun} loaded. Accept adds it to the table.\n\n"
                      + marker_json("AI_COLUMN:", data))


def _boolean_column(condition: str, noun: str) -> dict[str, str]:
    allow = re.match(r"(?:allow|accept|include|permit)s?\s+(.+)", condition, re.I)
    if allow and noun == "trial":
        subject = allow.group(1)
        short = re.sub(r"\bmetastases\b", "mets", subject, flags=re.I)
        return {"name": _title(f"Allows {short}")[:40], "type": "boolean",
                "criteria": f"Based on the eligibility criteria, does this trial allow patients with {subject}? "
                            "Consider both inclusion and exclusion criteria.",
                "explanation": f"Identifies trials that accept patients with {subject}; filter to Yes to keep them."}
    return {"name": _title(condition)[:40], "type": "boolean",
            "criteria": f"Does this {noun} meet this condition: {condition}?",
            "explanation": f"Marks each {noun} Yes/No for '{condition}'; filter to Yes to keep the matches."}


def _title(text: str) -> str:
    small = {"a", "an", "the", "of", "for", "with", "and", "or", "to", "in"}
    words = text.split()
    return " ".join(w if (w.lower() in small and i) or w.isupper() else w[:1].upper() + w[1:]
                    for i, w in enumerate(words))


# -- look-ups -------------------------------------------------------------------------------------------

@intent(priority=200)
def look_up(req: DemoRequest) -> Reply | None:
    if req.tool_results:
        return None
    text = req.user_text
    if (nct := NCT.search(text)) and req.offers_tool("get_trial"):
        return Reply.tool("get_trial", {"nct_id": nct.group(0).upper()}, preface=f"Let me pull up {nct.group(0)}.")
    pmid = PMID.search(text)
    if pmid and req.offers_tool("get_pubmed_article"):
        return Reply.tool("get_pubmed_article", {"pmid": pmid.group(1)}, preface=f"Fetching PMID {pmid.group(1)}.")
    if nct or pmid:
        what = nct.group(0) if nct else f"PMID {pmid.group(1) if pmid else ''}"
        return Reply.text(f"I can't look up {what} from this page: that look-up tool isn't available here. "
                          "Open it from TrialScout (trials) or Tablizer (articles) and ask again.")
    search = re.match(r"\s*(?:search pubmed for|search pubmed|pubmed search for|find (?:articles|papers) "
                      r"(?:about|on))\s+(.+)", text, re.I)
    if search and req.offers_tool("search_pubmed") and not req.offers_marker("PUBMED_QUERY:"):
        return Reply.tool("search_pubmed", {"query": search.group(1).strip(" ?."), "max_results": 5},
                          preface="Searching PubMed.")
    return None


@intent(priority=210)
def analyse_loaded(req: DemoRequest) -> Reply | None:
    """"What's the most common phase among these?": read every staged item, then count."""
    if req.tool_results or not ANALYSE.search(req.user_text):
        return None
    kind = "trials" if req.page == "trialscout" else "articles"
    if not req.offers_tool("get_staged_items"):
        return None
    if f"LOADED {kind.upper()}: none loaded" in req.page_context:
        return Reply.text(f"There are no {kind} loaded yet, so there is nothing to count. Run a search first."
                          + _page_suggestions(req))
    return Reply.tool("get_staged_items", {"kind": kind, "start": 0, "end": 100},
                      preface=f"Let me read all the loaded {kind}.")


# -- after tools ----------------------------------------------------------------------------------------

@intent(priority=100)
def after_tools(req: DemoRequest) -> Reply | None:
    results = req.tool_results
    if not results:
        return None
    name, tool_input, text, is_error = results[-1]
    if is_error:
        return Reply.text(f"The {name.replace('_', ' ')} tool reported a problem: {text.removeprefix('Error: ')}")
    if name == "get_staged_items":
        return _count_staged(req, tool_input, text)
    if name == "get_trial":
        return Reply.text(_summarise_trial(text))
    if name == "get_pubmed_article":
        return Reply.text(_summarise_article(text))
    if name in ("search_trials", "search_pubmed"):
        lines = text.splitlines()
        listed = [line for line in lines if line.startswith("- ")][:5]
        more = "\n".join(listed) or "Nothing matched."
        return Reply.text(f"{lines[0]}\n\nTop results:\n{more}" + _page_suggestions(req))
    return None


def _count_staged(req: DemoRequest, tool_input: dict[str, Any], text: str) -> Reply:
    lines = text.splitlines()
    items = [json.loads(line) for line in lines[1:] if line.startswith("{")]
    header = lines[0] if lines else ""
    total_match = re.match(r"(\d+) of (\d+)", header)
    total = int(total_match.group(2)) if total_match else len(items)
    read_upto = tool_input.get("start", 0) + len(items)
    calls = req.tool_calls_this_turn()
    if read_upto < total and calls.count("get_staged_items") < 5:
        return Reply.tool("get_staged_items", {"kind": tool_input["kind"], "start": read_upto, "end": read_upto + 100},
                          preface="Reading the rest.")
    everything = _all_staged_items(req)
    kind = tool_input["kind"]
    question = req.user_text.lower()
    field = next((f for f in ("phase", "status", "year", "journal", "sponsor") if f in question),
                 "phase" if kind == "trials" else "year")
    values: Counter[str] = Counter()
    for item in everything:
        value = item.get(field)
        if isinstance(value, list):
            value = "/".join(value) if value else None
        values[str(value) if value not in (None, "") else "not given"] += 1
    n = sum(values.values())
    if not n:
        return Reply.text(f"I couldn't read any loaded {kind}.")
    rows = "\n".join(f"- {value}: {count} ({count / n:.0%})" for value, count in values.most_common(8))
    top, top_count = values.most_common(1)[0]
    return Reply.text(f"Looking at your {n} loaded {kind}:\n\n{rows}\n\nThe most common {field} is **{top}** "
                      f"({top_count} of {n})." + _page_suggestions(req))


def _all_staged_items(req: DemoRequest) -> list[dict[str, Any]]:
    """Every staged item returned by get_staged_items calls in this turn (results may be split in pages)."""
    items: list[dict[str, Any]] = []
    uses: dict[str, str] = {}
    for msg in req.messages:
        content = msg.get("content")
        for block in content if isinstance(content, list) else ():
            if block.get("type") == "tool_use":
                uses[block["id"]] = block["name"]
            elif block.get("type") == "tool_result" and uses.get(block["tool_use_id"]) == "get_staged_items":
                content = block.get("content")
                text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content or [])
                items += [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    seen: dict[str, dict[str, Any]] = {}
    for item in items:
        seen[str(item.get("nct_id") or item.get("pmid") or item.get("id") or len(seen))] = item
    return list(seen.values())


def _field(text: str, name: str) -> str:
    match = re.search(rf"^{name}: (.*)$", text, re.M)
    return match.group(1).strip() if match else "—"


def _summarise_trial(text: str) -> str:
    nct = re.search(r"Clinical Trial (NCT\d{8})", text)
    outcomes = re.search(r"=== Primary Outcomes ===\n(.*?)(?:\n\n|$)", text, re.S)
    eligibility = re.search(r"=== Eligibility ===\n(.*?)\n\n===", text, re.S)
    first_criteria = [line.strip(" *-") for line in (eligibility.group(1) if eligibility else "").splitlines()
                      if line.strip(" *-") and "criteria" not in line.lower()][:3]
    summary_line = _field(text, "Summary")
    return "\n".join([
        f"**{nct.group(1) if nct else 'This trial'}: {_field(text, 'Title')}**", "",
        f"- {_field(text, 'Phase')}",
        f"- Sponsor: {_field(text, 'Sponsor')}",
        f"- Conditions: {_field(text, 'Conditions')}",
        f"- Interventions: {_field(text, 'Interventions')}",
        f"- Ages: {_field(text, 'Ages')}",
        "", "Primary outcomes:", (outcomes.group(1).strip() if outcomes else "Not specified"),
        *(["", "Some eligibility points:", *[f"- {c[:160]}" for c in first_criteria]] if first_criteria else []),
        "", f"Summary: {summary_line[:500]}",
    ])


def _summarise_article(text: str) -> str:
    abstract = text.split("Abstract:", 1)[-1].strip()
    sentences = re.split(r"(?<=[.!?])\s+", abstract)
    gist = " ".join(sentences[:3]) if abstract and abstract != "(no abstract)" else "It has no abstract in PubMed."
    return "\n".join([
        f"**PMID: {_field(text, 'PMID')} — {_field(text, 'Title')}**", "",
        f"- {_field(text, 'Journal')}",
        f"- Authors: {_field(text, 'Authors')}",
        f"- MeSH: {_field(text, 'MeSH')[:300]}",
        f"- Linked trials: {_field(text, 'Linked trials')}",
        "", f"In short: {gist[:900]}",
    ])


@intent(priority=980)
def page_help(req: DemoRequest) -> Reply | None:
    if req.page not in ("tablizer", "trialscout"):
        return None
    app = "TrialScout" if req.page == "trialscout" else "Tablizer"
    asked = json.dumps(req.user_text.strip()[:200], ensure_ascii=False)
    return Reply.text(
        f"I'm the demo model, a deterministic stand-in for Claude on {app}, and I have no prepared answer for "
        f"{asked}. I can build a {'trial search' if app == 'TrialScout' else 'PubMed query'}, add an AI "
        f"column, look up {'an NCT id' if app == 'TrialScout' else 'a PMID'}, or count what's loaded. "
        "With an Anthropic API key configured, Claude answers this directly." + stream_note(req)
        + _page_suggestions(req))
