"""The demo model on Tablizer and TrialScout: queries, search forms, AI columns, look-ups and analysis.

It answers only from what the request carries: the page context of the turn's user message, tool results in
the messages. Counts are computed from the staged items it reads with `get_staged_items`.
"""

from __future__ import annotations

import json
import re

from backend.demo.brain import DemoRequest, intent
from backend.demo.general import page_suggestions, stream_note
from backend.demo.rows import after_staged
from backend.demo.wire import Reply

NCT = re.compile(r"\bNCT\d{8}\b", re.I)
PMID = re.compile(r"\bPMID:?\s*(\d{4,9})\b", re.I)
# "article 31000010", or on Tablizer a bare PubMed id after a look-up verb: both are a PMID.
ARTICLE_ID = re.compile(r"\b(?:article|paper|abstract|pubmed id)\s*(?:no\.?|number|#)?\s*(\d{6,9})\b", re.I)
BARE_ID = re.compile(r"\b(?:open|pull up|show|fetch|look up|get|about|details (?:on|of|for))\s+(?:me\s+)?(\d{7,9})\b",
                     re.I)


# -- look-ups -------------------------------------------------------------------------------------------

@intent(priority=200)
def look_up(req: DemoRequest) -> Reply | None:
    if req.tool_results:
        return None
    text = req.user_text
    if (nct := NCT.search(text)) and req.offers_tool("get_trial"):
        return Reply.tool("get_trial", {"nct_id": nct.group(0).upper()}, preface=f"Let me pull up {nct.group(0)}.")
    pmid = PMID.search(text) or ARTICLE_ID.search(text) or (req.page == "tablizer" and BARE_ID.search(text)) or None
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
        return after_staged(req, tool_input, text)
    if name == "get_trial":
        return Reply.text(_summarise_trial(text))
    if name == "get_pubmed_article":
        return Reply.text(_summarise_article(text))
    if name in ("search_trials", "search_pubmed"):
        lines = text.splitlines()
        listed = [line for line in lines if line.startswith("- ")][:5]
        more = "\n".join(listed) or "Nothing matched."
        return Reply.text(f"{lines[0]}\n\nTop results:\n{more}" + page_suggestions(req))
    return None


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
    """Nothing above understood the request: say plainly what the demo can do here, with chips that work."""
    if req.page not in ("tablizer", "trialscout"):
        return None
    trials = req.page == "trialscout"
    app = "TrialScout" if trials else "Tablizer"
    asked = json.dumps(req.user_text.strip()[:200], ensure_ascii=False)
    what = ("trial search (condition, drug or drug class, phase, status, sponsor, sex, age, location)" if trials
            else "PubMed query (MeSH headings, synonyms, publication types, dates)")
    can = [f"build or refine a {what}",
           "broaden or narrow the current search",
           f"answer questions about the loaded {'trials' if trials else 'articles'} (counts by "
           f"{'phase, status' if trials else 'journal, year'}; the {'largest' if trials else 'newest'} …) or "
           "summarise them",
           "add an AI column (yes/no or extracted text)",
           f"look up {'an NCT id' if trials else 'a PMID'}"]
    return Reply.text(
        f"I'm the demo model, a deterministic stand-in for Claude on {app}, and {asked} is beyond what I can do "
        "without a real model. Here is what I can do on this page:\n\n" + "\n".join(f"- {c}" for c in can)
        + "\n\nWith an Anthropic API key configured, Claude answers requests like yours directly."
        + stream_note(req) + page_suggestions(req))
