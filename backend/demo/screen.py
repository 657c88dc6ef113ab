"""What the demo model makes of the rest of the screen: the filter chips, the counts, the table as a view.

- "Why so few?": the filters and how many loaded rows they hide, or total vs loaded when none is set.
- "Only show the Phase 3 ones" / "filter to 2022": a `filter_suggestion` on the loaded rows, when the
  request is about what the table shows (show, display, table, filter); "narrow it down to …" stays a
  change of the search (searches.py).
- "Which of these exclude …" / "rule out …": a yes/no AI column over the rows, not a new search.
- Guided workflows with steps: comparing searches, checking for missed articles, more results.
"""

from __future__ import annotations

import re

from backend.demo.brain import DemoRequest, intent, marker_json
from backend.demo.general import has_rows, page_suggestions, suggestions
from backend.demo.page_state import read
from backend.demo.searches import query_clauses, split_and
from backend.demo.vocabulary import phases_in, statuses_in
from backend.demo.wire import Reply

FILTERS = re.compile(r"^- Active filters \((\d+)(?:; they hide ([\d,]+) of the ([\d,]+) loaded rows)?\): (.*)$", re.M)
SHOWN = re.compile(r"^- Results: ([\d,]+) loaded of ([\d,]+|None|\?)? ?total(?: \| ([\d,]+) shown)?", re.M)
FEW = re.compile(r"\b(so few|(?:too|very) few|only (?:\d+|a few|a handful)|where (?:did|are|have) the (?:other|rest)|"
                 r"(?:other|rest of the|missing) (?:rows|trials|articles|results)|what(?:'s| is) hiding|hidden|"
                 r"fewer than|why (?:do|did|can) i (?:only )?(?:see|get|have))\b", re.I)
VIEW = re.compile(r"\b(show|display|see|view|table|filter\w*|hide)\b", re.I)
NARROWING = re.compile(r"\b(only|just|filter\w*|narrow|restrict|keep|limit)\b", re.I)
EXCLUDES = re.compile(r"\b(?:exclud\w*|rules? out|ruled out|won'?t (?:take|accept|enrol+)|do(?:es)?n'?t (?:take|accept|"
                      r"allow)|disqualif\w*|bar(?:s|red)?)\s+(?:any(?:one|body)\s+|those\s+)?(?:patients|people|"
                      r"participants|subjects)?\s*(?:who (?:have|had|are on)|with|on|having)?\s*(.+)", re.I)
ABOUT_ROWS = re.compile(r"\b(these|them|of the|loaded|which (?:trials|studies|ones)|any of|trials that|ones that)\b",
                        re.I)
COMPARE = re.compile(r"\bcompar\w*\b.*\b(searches|queries|snapshots|result sets|two searches|before and after)\b|"
                     r"\bhow (?:do|can) i compare\b", re.I)
MISSING = re.compile(r"\b(missing|missed|overlook\w*|left out)\b.*\b(relevant|important|key|other)?\s*"
                     r"(articles|papers|studies|trials|literature)\b", re.I)
BROADEN = re.compile(r"\b(widen\w*|broaden\w*|expand|loosen|relax|wider|broader)\b", re.I)
MORE = re.compile(r"\b(show|give|load|see|get) (?:me )?more (?:results|rows|articles|trials)\b|\bnext page\b", re.I)


def _has_rows(req: DemoRequest) -> bool:
    return has_rows(req.page_context)


def actions(items: list[dict[str, object]]) -> str:
    return "\n\n" + marker_json("SUGGESTED_ACTIONS:", [{"handler": "client", **i} for i in items])


@intent(priority=140)
def why_few(req: DemoRequest) -> Reply | None:
    if req.page not in ("trialscout", "tablizer") or req.tool_results or not FEW.search(req.user_text):
        return None
    context, noun = req.page_context, "trials" if req.page == "trialscout" else "articles"
    counts = SHOWN.search(context)
    loaded = counts.group(1) if counts else "?"
    total = counts.group(2) if counts and counts.group(2) not in (None, "None", "?") else None
    if chips := FILTERS.search(context):
        hidden = (f" They hide **{chips.group(2)} of the {chips.group(3)}** loaded {noun}." if chips.group(2) else "")
        return Reply.text(
            f"The table is filtered: {chips.group(1)} active filter{'s' if chips.group(1) != '1' else ''} — "
            f"{chips.group(4)}.{hidden} The search itself matched {total or 'more'} {noun} and {loaded} are loaded; "
            "remove a chip above the table (its ×) to see the rows it hides."
            + suggestions([{"label": f"Summarise the {noun} shown", "value": f"Summarise the loaded {noun}"},
                           {"label": "Broaden the search", "value": "Broaden my search"}]))
    if BROADEN.search(req.user_text):
        return None  # "too few, widen it": the search is to change (searches.py)
    if req.page == "tablizer":
        dates = re.search(r"^- Dates: (.*) to (.*)$", context, re.M)
        narrow = [f"the date range {dates.group(1)} to {dates.group(2)}"] if dates and "any" not in dates.groups() \
            else []
    else:
        form = read(req.page, context).search
        narrow = [f"{k.replace('_', ' ')} = {', '.join(v) if isinstance(v, list) else v}" for k, v in form.items()
                  if k != "condition" and v]
    why = (f" What narrows it: {'; '.join(narrow)}." if narrow else "")
    return Reply.text(
        f"No table filter is active: the search matched {total or 'no'} {noun} in all, and {loaded} are loaded "
        f"in the table.{why} Broadening the search (fewer terms, synonyms, a wider date range or status) finds more."
        + suggestions([{"label": "Broaden the search", "value": "Broaden my search"},
                       {"label": "Show more results", "value": "Show me more results"}]))


def _filter(req: DemoRequest) -> dict[str, object] | None:
    text = req.user_text
    if req.page == "trialscout":
        if phases := phases_in(text):
            return {"field": "phase", "operator": "equals", "value": phases[0],
                    "explanation": f"Keeps the loaded trials in {phases[0].replace('PHASE', 'Phase ')}."}
        if statuses := statuses_in(text):
            return {"field": "status", "operator": "equals", "value": statuses[0],
                    "explanation": f"Keeps the loaded trials whose status is {statuses[0].replace('_', ' ').lower()}."}
        return None
    if year := re.search(r"\b(?:from|in|published in|of|dated)\s+((?:19|20)\d\d)\b", text, re.I):
        return {"field": "year", "operator": "equals", "value": year.group(1),
                "explanation": f"Keeps the loaded articles published in {year.group(1)}."}
    journals = {m.group(1) for m in re.finditer(r"^- PMID: \d+ \| .* \| (.*?) \(", req.page_context, re.M)}
    for journal in sorted(journals, key=len, reverse=True):
        if journal and journal.lower() in text.lower():
            return {"field": "journal", "operator": "equals", "value": journal,
                    "explanation": f"Keeps the loaded articles from {journal}."}
    return None


@intent(priority=180)
def filter_card(req: DemoRequest) -> Reply | None:
    """A filter on the rows already loaded: the request is about the table's view and names a field's value."""
    text = req.user_text
    if (req.tool_results or not req.offers_marker("FILTER_SUGGESTION:") or not _has_rows(req)
            or not (NARROWING.search(text) and VIEW.search(text)) or re.search(r"\b(search|query|find)\b", text, re.I)):
        return None
    card = _filter(req)
    if card is None:
        return None
    return Reply.text("A filter on the loaded rows does that; Accept adds it as a chip above the table (remove the "
                      "chip to undo). To search for more of them instead, change the search."
                      "\n\n" + marker_json("FILTER_SUGGESTION:", card))


@intent(priority=204)
def exclusion_column(req: DemoRequest) -> Reply | None:
    """"Which of these exclude X?" is a question about each loaded row's criteria: a yes/no AI column."""
    text = req.user_text
    if req.tool_results or not req.offers_marker("AI_COLUMN:") or not _has_rows(req):
        return None
    match = EXCLUDES.search(text)
    if not match or not (ABOUT_ROWS.search(text) or text.rstrip().endswith("?")):
        return None
    thing = re.sub(r"^(?:a|an|the)\s+|\s*(?:please|from (?:the )?(?:study|trial))\s*$", "",
                   match.group(1).strip(" ?.!"), flags=re.I)
    noun = "trial" if req.page == "trialscout" else "article"
    spec = {"name": f"Excludes {thing}?"[:60], "type": "boolean",
            "criteria": f"Do this {noun}'s eligibility criteria exclude patients with {thing}?",
            "explanation": f"Marks each loaded {noun} Yes/No from its eligibility criteria; filter to Yes to keep "
                           "them."}
    return Reply.text(f"That is in each {noun}'s eligibility criteria, so an AI column can check every loaded {noun}. "
                      "Accept adds it to the table.\n\n" + marker_json("AI_COLUMN:", spec))


@intent(priority=150)
def workflows(req: DemoRequest) -> Reply | None:
    """Guided next steps where the answer is a workflow: the steps, with the page's actions to take them."""
    if req.page not in ("trialscout", "tablizer") or req.tool_results:
        return None
    text, context = req.user_text, req.page_context
    if COMPARE.search(text):
        if req.page == "tablizer":
            return Reply.text(
                "Comparing two searches takes three steps:\n\n1. **Save** the current results as a snapshot.\n"
                "2. **Change the search** (refine or broaden it) and run it, then save that as a second snapshot.\n"
                "3. Tick both snapshots and press **Compare**: the table shows what is only in A, only in B, and "
                "in both, and I can summarise each group."
                + actions([{"label": "Save these results as a snapshot", "action": "save_snapshot"}])
                + suggestions([{"label": "Broaden, then compare", "value": "Broaden my search"},
                               {"label": "Refine, then compare", "value": "Narrow the query to randomized "
                                "controlled trials"}]))
        return Reply.text(
            "TrialScout keeps one search at a time: export or note the current results, change the search form "
            "and run it again; AI columns then mark the same question on each result set so they compare side by "
            "side. To compare sets of articles, Tablizer saves searches as snapshots and compares them."
            + actions([{"label": "Run the search form", "action": "run_search"}])
            + page_suggestions(req))
    if MISSING.search(text) and req.page == "tablizer" and req.offers_marker("PUBMED_QUERY:"):
        current = read(req.page, context).search.get("query")
        if not current:
            return None
        clauses = [c for part in split_and(current) for c in query_clauses(part)] or [current]
        broader = " AND ".join(clauses[:2])
        card = {"query": broader, "explanation": "The same topic with MeSH headings and free-text synonyms, keeping "
                "only the main concepts, so related articles indexed differently are found too."}
        return Reply.text(
            "To see what the current search misses: save it as a snapshot, run this broader query, save that too, "
            "and compare the two — the articles only in the broader search are the ones you were missing."
            + actions([{"label": "Save current results first", "action": "save_snapshot"}])
            + "\n\n" + marker_json("PUBMED_QUERY:", card))
    if MORE.search(text) and not BROADEN.search(text) and not re.search(r"\b(?:narrow|broad)", text, re.I):
        counts = SHOWN.search(context)
        noun = "trials" if req.page == "trialscout" else "articles"
        lead = (f"{counts.group(1)} of {counts.group(2)} matched {noun} are loaded. " if counts else "")
        return Reply.text(lead + "The next page of results loads more; broadening the search matches more."
                          + actions([{"label": "Next page", "action": "next_page"}])
                          + suggestions([{"label": "Broaden the search", "value": "Broaden my search"}]))
    return None


WHICH_HAVE = re.compile(r"^\s*(?:which|what|how many)\s+(?:of (?:these|them|the \w+)\s+|"
                        r"(?:trials|studies|articles|papers|ones)\s+)(?:have|has|had|use|uses|used|report|reports|measure|measures|include|includes|test|"
                        r"tests|enrol+s?|require|requires|list|lists)\s+(.+?)\s*\??$", re.I)
ROW_FIELDS = re.compile(r"\b(phase|status|year|journal|sponsor|enrol+ment|participants|recruit\w*|most|largest|"
                        r"smallest|newest|oldest)\b", re.I)


@intent(priority=207)
def which_rows_column(req: DemoRequest) -> Reply | None:
    """"Which trials have OS as primary endpoint?": a fact each row's record holds but the table does not show,
    so a yes/no AI column answers it for every loaded row (the rows' listed fields are counted in rows.py)."""
    text = req.user_text
    if req.tool_results or not req.offers_marker("AI_COLUMN:") or not _has_rows(req):
        return None
    match = WHICH_HAVE.match(text)
    if not match or ROW_FIELDS.search(match.group(1)):
        return None
    noun = "trial" if req.page == "trialscout" else "article"
    verb = re.search(r"\b(have|has|had|use\w*|report\w*|measure\w*|include\w*|test\w*|enrol\w*|require\w*|list\w*)\b",
                     text, re.I)
    said = verb.group(1).lower() if verb else "have"
    said = "have" if said in ("has", "had") else said.removesuffix("s")
    thing = match.group(1).strip(" ?.")
    spec = {"name": f"{thing[:1].upper()}{thing[1:]}?"[:60], "type": "boolean",
            "criteria": f"Does this {noun} {said} {thing}? Answer from its record.",
            "explanation": f"Marks each loaded {noun} Yes/No; filter the column to Yes to see which."}
    return Reply.text(f"The table doesn't show that, but each {noun}'s record does: an AI column can check every "
                      f"loaded {noun}, and filtering it to Yes answers “which”. Accept adds it."
                      "\n\n" + marker_json("AI_COLUMN:", spec))
