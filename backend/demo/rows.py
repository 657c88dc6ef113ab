"""Questions about the loaded rows, answered from them: counts by phase, status, journal, year or sponsor,
the largest or newest, totals, and a summary of what is loaded.

When the page context lists every loaded row the demo answers from it at once; otherwise it reads them all
with `get_staged_items` first (as Claude would) and answers after the tool results. Nothing is estimated:
each number is counted from rows the request carries.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from backend.demo.brain import DemoRequest, intent
from backend.demo.general import page_suggestions
from backend.demo.page_state import enum, read
from backend.demo.vocabulary import phases_in, statuses_in
from backend.demo.wire import Reply

SUMMARY = re.compile(r"\b(summar\w+|overview|gist|tl;?dr|recap|sum up|patterns?|themes?|trends?|stand(?:s)? out|"
                     r"describe (?:these|them|the results)|"
                     r"what(?:'s| is| do i have) (?:in )?(?:the table|loaded|here))\b", re.I)
JOURNALS = {"nejm": "N Engl J Med", "new england": "N Engl J Med", "jco": "J Clin Oncol", "lancet oncology":
            "Lancet Oncol", "jto": "J Thorac Oncol", "jama": "JAMA", "bmj": "BMJ", "nature medicine": "Nat Med"}
PHASE_NAMES = {"EARLY_PHASE1": "Early Phase 1", "PHASE1": "Phase 1", "PHASE2": "Phase 2", "PHASE3": "Phase 3",
               "PHASE4": "Phase 4", "NA": "Not applicable"}


@dataclass(frozen=True)
class Rows:
    kind: str  # "trials" | "articles"
    items: list[dict[str, Any]]
    total: int | None  # what the search matched, when the page says

    def label(self, item: dict[str, Any]) -> str:
        key = item.get("nct_id") or f"PMID: {item.get('pmid')}"
        return f"{key} ({item.get('title', '')[:80]})"


def phase_label(item: dict[str, Any]) -> str:
    phases = item.get("phase") or []
    if isinstance(phases, str):
        phases = phases.split("/")
    return "/".join(PHASE_NAMES.get(p, p) for p in phases) or "no phase given"


def status_label(item: dict[str, Any]) -> str:
    status = item.get("status")
    return str(status).replace("_", " ").capitalize().replace("Active not", "Active, not") if status else "not given"


FIELDS: dict[str, Callable[[dict[str, Any]], str]] = {
    "phase": phase_label, "status": status_label,
    "journal": lambda i: i.get("journal") or "not given",
    "year": lambda i: str(i.get("year") or "not given"),
    "sponsor": lambda i: i.get("sponsor") or "not given",
}
# "Which phase…?", "which sponsors…?" ask for a count by one of the FIELDS.
QUESTION = re.compile(r"\b(how many|number of|most common|most frequent|most often|the most|"
                      rf"which (?:\w+ )?(?:{'|'.join(FIELDS)})s?|breakdown|break (?:these|them|it|this) down|"
                      r"distribution|count|largest|biggest|smallest|fewest|newest|latest|most recent|oldest|earliest|"
                      r"total|sum|average|mean|median|top \d*|spread)\b", re.I)


def _field(text: str, kind: str) -> str:
    lowered = text.lower()
    for name, pattern in (("phase", r"\bphases?\b"), ("status", r"\bstatus|recruit|complet|terminat"),
                          ("journal", r"\bjournals?|published|\bnejm\b|\bjco\b|lancet|jama"),
                          ("year", r"\byears?\b|\b(?:19|20)\d\d\b"), ("sponsor", r"\bsponsor")):
        if re.search(pattern, lowered):
            return name
    return "phase" if kind == "trials" else "year"


def _share(n: int, of: int) -> str:
    return f"{n} of {of} ({n / of:.0%})"


def answer_question(text: str, rows: Rows) -> str:
    items, n, kind = rows.items, len(rows.items), rows.kind
    if not n:
        return f"There are no {kind} loaded, so there is nothing to count yet. Run a search first."
    lowered = text.lower()
    scope = f"the {n} loaded {kind}" + (f" (of {rows.total:,} the search matched)" if rows.total and rows.total > n
                                        else "")
    sized = [i for i in items if isinstance(i.get("enrollment"), int)]
    if kind == "trials" and re.search(r"\b(total|sum|altogether|combined|across)\b", lowered) and \
            re.search(r"particip|patients|enrol|people|subjects|sample", lowered):
        total = sum(i["enrollment"] for i in sized)
        return f"Across {scope}, planned enrollment adds up to **{total:,}** participants ({len(sized)} list a number)."
    if kind == "trials" and re.search(r"\b(largest|biggest|most participants|smallest|fewest)\b|\bmost patients\b",
                                      lowered):
        if not sized:
            return f"None of {scope} lists an enrollment number."
        small = bool(re.search(r"\b(smallest|fewest)\b", lowered))
        pick = (min if small else max)(sized, key=lambda i: i["enrollment"])
        return (f"The {'smallest' if small else 'largest'} of {scope} is {rows.label(pick)} with "
                f"**{pick['enrollment']:,}** participants planned.")
    if re.search(r"\b(newest|latest|most recent|oldest|earliest)\b", lowered) and kind == "articles":
        dated = [i for i in items if isinstance(i.get("year"), int)]
        if not dated:
            return f"None of {scope} shows a year."
        old = bool(re.search(r"\b(oldest|earliest)\b", lowered))
        pick = (min if old else max)(dated, key=lambda i: i["year"])
        return f"The {'oldest' if old else 'newest'} of {scope} is {rows.label(pick)}, from **{pick['year']}**."
    field = _field(text, kind)
    label = FIELDS[field]
    how_many = re.search(r"\b(how many|number of|count)\b", lowered)
    if how_many:
        match = _matcher(text, field)
        if match is not None:
            test, what = match
            hits = [i for i in items if test(i)]
            return f"**{len(hits)}** of {scope} are {what}." + (
                f" For example: {', '.join(rows.label(i) for i in hits[:3])}." if hits else "")
    counts = Counter(label(i) for i in items)
    lines = "\n".join(f"- {value}: {_share(count, n)}" for value, count in counts.most_common(10))
    top, top_count = counts.most_common(1)[0]
    return (f"Looking at {scope}, by {field}:\n\n{lines}\n\nThe most common {field} is **{top}** "
            f"({top_count} of {n}).")


def _matcher(text: str, field: str) -> tuple[Callable[[dict[str, Any]], bool], str] | None:
    lowered = text.lower()
    if field == "phase" and (phases := phases_in(text)):
        return (lambda i: bool(set(i.get("phase") or []) & set(phases)),
                " or ".join(PHASE_NAMES.get(p, p) for p in phases))
    if field == "status" and (statuses := statuses_in(text)):
        return (lambda i: i.get("status") in statuses, " or ".join(s.replace("_", " ").lower() for s in statuses))
    if field == "year" and (m := re.search(r"\b((?:19|20)\d\d)\b", lowered)):
        year = int(m.group(1))
        if re.search(r"\b(later|after|since|newer|or more recent|onwards|and up)\b", lowered):
            return (lambda i: isinstance(i.get("year"), int) and i["year"] >= year + (1 if "after" in lowered else 0),
                    f"from {year} or later")
        if re.search(r"\b(before|earlier|older|prior)\b", lowered):
            return lambda i: isinstance(i.get("year"), int) and i["year"] < year, f"from before {year}"
        return lambda i: i.get("year") == year, f"from {year}"
    if field == "journal":
        named = next((name for alias, name in JOURNALS.items() if re.search(rf"\b{alias}\b", lowered)), None)
        if named is not None:
            return lambda i: (i.get("journal") or "").lower() == named.lower(), f"in {named}"
    return None


def summarise(rows: Rows, search: str) -> str:
    items, n, kind = rows.items, len(rows.items), rows.kind
    if not n:
        return f"There are no {kind} loaded yet, so there is nothing to summarise. Run a search first."
    head = f"You have **{n}** {kind} loaded" + (f" of {rows.total:,} that {search or 'the search'} matched"
                                                 if rows.total else "") + "."
    lines = [head, ""]
    if kind == "trials":
        phases = Counter(phase_label(i) for i in items).most_common(4)
        statuses = Counter(status_label(i) for i in items).most_common(3)
        lines.append("- By phase: " + ", ".join(f"{p} {c}" for p, c in phases))
        lines.append("- By status: " + ", ".join(f"{s} {c}" for s, c in statuses))
        sized = [i for i in items if isinstance(i.get("enrollment"), int)]
        if sized:
            big = max(sized, key=lambda i: i["enrollment"])
            lines.append(f"- Enrollment: {sum(i['enrollment'] for i in sized):,} planned in all; the largest is "
                         f"{rows.label(big)} with {big['enrollment']:,}")
    else:
        journals = Counter(i.get("journal") or "not given" for i in items).most_common(3)
        years = sorted(i["year"] for i in items if isinstance(i.get("year"), int))
        lines.append("- Top journals: " + ", ".join(f"{j} {c}" for j, c in journals))
        if years:
            lines.append(f"- Years: {years[0]}–{years[-1]}, most often {Counter(years).most_common(1)[0][0]}")
    lines += ["", "Titles include: " + "; ".join(f"{i.get('title', '')[:70]}" for i in items[:3]) + ".",
              "", "_This summary counts the rows; it has not read the abstracts or records._"]
    return "\n".join(lines)


def _wants(req: DemoRequest) -> str | None:
    text = req.user_text
    if req.page not in ("trialscout", "tablizer"):
        return None
    if SUMMARY.search(text):
        return "summary"
    if QUESTION.search(text) and not re.search(r"\b(find|search for|look for|column)\b", text, re.I):
        return "question"
    return None


@intent(priority=210)
def rows_question(req: DemoRequest) -> Reply | None:
    if req.tool_results or not (wants := _wants(req)):
        return None
    state = read(req.page, req.page_context)
    kind = state.noun
    if state.all_rows_listed or not req.offers_tool("get_staged_items"):
        rows = Rows(kind, state.rows, state.total)
        search = "; ".join(f"{v}" for v in state.search.values() if v and not isinstance(v, list))
        body = summarise(rows, search) if wants == "summary" else answer_question(req.user_text, rows)
        if not state.all_rows_listed:
            body += f"\n\n_Only the {len(state.rows)} listed rows were counted._"
        return Reply.text(body + page_suggestions(req))
    return Reply.tool("get_staged_items", {"kind": kind, "start": 0, "end": 100},
                      preface=f"Let me read all the loaded {kind}.")


def after_staged(req: DemoRequest, tool_input: dict[str, Any], text: str) -> Reply:
    """After a `get_staged_items` result: read on while there is more, then answer from every item."""
    lines = text.splitlines()
    items = [json.loads(line) for line in lines[1:] if line.startswith("{")]
    total_match = re.match(r"(\d+) of (\d+)", lines[0] if lines else "")
    total = int(total_match.group(1)) if total_match else len(items)
    read_upto = tool_input.get("start", 0) + len(items)
    if read_upto < total and req.tool_calls_this_turn().count("get_staged_items") < 5:
        return Reply.tool("get_staged_items", {"kind": tool_input["kind"], "start": read_upto,
                                               "end": read_upto + 100}, preface="Reading the rest.")
    state = read(req.page, req.page_context)
    rows = Rows(tool_input["kind"], all_staged_items(req), state.total)
    search = "; ".join(f"{v}" for v in state.search.values() if v and not isinstance(v, list))
    body = summarise(rows, search) if SUMMARY.search(req.user_text) else answer_question(req.user_text, rows)
    return Reply.text(body + page_suggestions(req))


def all_staged_items(req: DemoRequest) -> list[dict[str, Any]]:
    """Every staged item returned by get_staged_items calls in this turn (results may be split in pages)."""
    items: list[dict[str, Any]] = []
    uses: dict[str, str] = {}
    for msg in req.messages:
        content = msg.get("content")
        for block in content if isinstance(content, list) else ():
            if block.get("type") == "tool_use":
                uses[block["id"]] = block["name"]
            elif block.get("type") == "tool_result" and uses.get(block["tool_use_id"]) == "get_staged_items":
                body = block.get("content")
                text = body if isinstance(body, str) else "".join(b.get("text", "") for b in body or [])
                items += [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    seen: dict[str, dict[str, Any]] = {}
    for item in items:  # the page may send display labels ("Phase 2", "Recruiting"): count them as the enums
        if isinstance(item.get("phase"), list):
            item["phase"] = [enum(str(p)) for p in item["phase"]]
        if isinstance(item.get("status"), str):
            item["status"] = enum(item["status"])
        seen[str(item.get("nct_id") or item.get("pmid") or item.get("id") or len(seen))] = item
    return list(seen.values())
