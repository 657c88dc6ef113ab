"""The demo model on TrialScout's screening: questions about the loaded patient and the verdicts, answered
from the stored results through the screening tools ("why is NCT… excluded?", "what would make her
eligible for the second one?", "screen the recruiting ones too", "which of these are near Boston?",
"make the report for her doctor", "she's actually 64"), then in words from what the tools returned.

Every answer ends somewhere the user can go on: a card to accept, a tool result in words, or what to do
first (load a patient, screen the trials) with suggestions.
"""

from __future__ import annotations

import re

from backend.demo.brain import DemoRequest, intent, marker_json
from backend.demo.screening_edits import profile_edits
from backend.demo.screening_state import (
    NCT,
    OBJECT,
    PRONOUNS,
    SUBJECT,
    Entry,
    ScreeningState,
    named_trial,
    place_in,
    radius_in,
    screening_state,
    statuses,
)
from backend.demo.wire import Reply

TOOLS = ("get_screening_trial", "find_screening_sites", "propose_profile_edit", "propose_screening",
         "create_screening_report")
REPORT = re.compile(r"\b(?:make|build|create|generate|produce|write|prepare|put together|draft|give me|export|"
                    r"download|print|need|want)\b.{0,60}\b(?:report|pdf|summary|hand-?out|letter|document|write-?up)\b|"
                    r"\b(?:report|summary|pdf|hand-?out|letter) for (?:the|her|his|my|their) (?:doctor|oncologist|"
                    r"physician|gp|clinician|patient|family)\b|\bprintable\b", re.I)
SITES = re.compile(r"\b(near(?:by|est)?|close to|closest|nearest|around|within \d+|distance|far from|sites?|"
                   r"locations?|located|where (?:are|is|can))\b", re.I)
NEW_SEARCH = re.compile(r"\b(find|search|look for|new trials|other trials)\b", re.I)
SCREEN = re.compile(rf"\b(re-?screen\w*|screen (?:{OBJECT}|the|these|those|this|all|against|again|also|too|more|"
                    r"recruiting|remaining|it|NCT\d{8})\b|(?:also|please|can you|could you|then|and) screen\b|"
                    rf"(?:run|start|do) (?:a |the |another |a new )?screening\b|check (?:{OBJECT}|the patient) against|"
                    r"match (?:her|him|the patient) against)", re.I)
WHAT_WOULD = re.compile(r"\bwhat (?:would|could|will|does it take|needs? to|has to|must)|\bhow (?:could|can|would|"
                        rf"might) (?:{SUBJECT}|i)\b|\b(?:become|make \w+|be made) eligible\b|"
                        r"\bqualify\b|\bget (?:in|into|on)\b|\bto be eligible\b|\bwhat's missing\b|"
                        r"\bwhat is missing\b|\bchange to\b", re.I)
EXPLAIN = re.compile(r"\b(why|explain|reason\w*|because|criteri\w*|eligib\w*|exclu\w*|ruled out|disqualif\w*|"
                     r"uncertain|unclear|verdict|fail\w*|not met|met|evidence|what (?:stops|blocks|kept|keeps)|fit|"
                     r"suit\w*|chances?|candidate|join|enrol+\w*|right for|a match)\b",
                     re.I)
OVERVIEW = re.compile(r"\b(summar\w*|overview|results?|shortlist|best|top|how did|which (?:trials|ones|studies)|"
                      rf"what (?:trials|ones)|eligible for|can (?:{PRONOUNS}) join|options)\b", re.I)
# "Which ones could she join?", "how many are excluded?", "show me the best matches": a question about the
# screening's verdicts as a whole (a count, a list, the best), not about one trial.
AGGREGATE = re.compile(r"\b(which|what (?:trials|ones|studies|are)|how many|list|show|any|all|best|top|count|number "
                       rf"of|options?|tally|so far|did (?:{PRONOUNS}|it) (?:get|find))\b", re.I)
# A verdict word says the question is about the screening; words that also describe a trial's own criteria
# ("which trials enrol over-65s?", "which match HER2+?") count only with the patient named.
VERDICT_TALK = re.compile(r"\b((?:in)?eligible|excluded|uncertain|unclear|not relevant|irrelevant|"
                          r"qualif(?:y|ies|ied)|(?:best|top|good|strong|closest) (?:matche?s?|fits?|options?|"
                          r"candidates?)|ruled (?:\w+ )?out|verdicts?|passed|failed)\b", re.I)
PATIENT_FIT = re.compile(r"\b(pass|match(?:es|ed|ing)?|fits?|suitable|suits?|candidates?|join|enrol+\w*|"
                         r"(?:right|good|open) for|options?)\b", re.I)
ASKED_VERDICT = (("EXCLUDED", r"excluded|ruled (?:\w+ )?out|rejected|failed|ineligible|not eligible|disqualif\w*"),
                 ("UNCERTAIN", r"uncertain|unclear|maybe|borderline|unsure"),
                 ("NOT_RELEVANT", r"not relevant|irrelevant|unrelated"))
PATIENT_REF = re.compile(r"\b(she|her|he|him|his|the patient|my patient|this patient|verdicts?)\b", re.I)
TRIAL_REF = re.compile(r"\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+(?:st|nd|rd|th)|last|"
                       r"bottom|top one|this (?:one|trial|study)|that (?:one|trial|study)|#\d+|"
                       r"(?:number|trial|study|option) \d+|"
                       r"excluded (?:one|trial|study)|uncertain (?:one|trial|study)|eligible (?:one|trial|study))\b",
                       re.I)


def chips(state: ScreeningState) -> str:
    """Suggestions that work from here: a verdict to explain, the report, screening more."""
    out = []
    first = state.by_verdict("EXCLUDED")[:1] or state.shortlist[:1]
    if first:
        out.append({"label": f"Why {first[0].verdict.lower()}?", "value": f"Why is {first[0].nct_id} "
                      f"{first[0].verdict.lower().replace('_', ' ')}?"})
    if state.screening_id is not None:
        out.append({"label": "Report for the doctor", "value": "Make the screening report for the doctor"})
    if state.loaded:
        out.append({"label": "Screen recruiting ones", "value": "Screen the recruiting trials too"})
    return "\n\n" + marker_json("SUGGESTED_VALUES:", out) if out else ""


def _no_patient() -> Reply:
    return Reply.text("No patient is loaded in TrialScout's patient panel, so there are no verdicts to explain yet. "
                      "Paste a note (or pick a saved patient) in the panel, check the extracted profile, then "
                      "press \"Screen the loaded trials\"; I can then explain each verdict from the stored results."
                      + "\n\n" + marker_json("SUGGESTED_VALUES:", [
                          {"label": "What can you do?", "value": "What can you help me with on this page?"}]))


def _no_screening(state: ScreeningState, req: DemoRequest) -> Reply:
    if state.loaded and req.offers_tool("propose_screening"):
        return Reply.tool("propose_screening", {"nct_ids": [str(r["nct_id"]) for r in state.loaded][:100],
                                                "explanation": "Screen the loaded trials against the patient"},
                          preface=f"{state.label or 'This patient'} has not been screened yet, so there are no "
                                  "verdicts to read. I'll propose screening the loaded trials.\n\n")
    return Reply.text(f"{state.label or 'This patient'} has not been screened yet. Load some trials (search from the "
                      "profile) and press \"Screen the loaded trials\"; then I can explain every verdict.")


def _overview(state: ScreeningState) -> Reply:
    if not state.shortlist:
        return Reply.text(f"Screening {state.screening_id} ({state.status}) has no screened trials yet." + chips(state))
    tally = ", ".join(f"{len(state.by_verdict(v))} {v.replace('_', ' ').lower()}"
                      for v in ("ELIGIBLE", "UNCERTAIN", "EXCLUDED", "NOT_RELEVANT") if state.by_verdict(v))
    lines = [f"Screening {state.screening_id} ({state.status}) of {state.label or 'the patient'}: "
             f"{len(state.shortlist)} trials — {tally}. Best first:"]
    lines += [f"{e.rank}. **{e.nct_id}** {e.verdict.replace('_', ' ')} (score {e.score:.2f}; met {e.met}, "
              f"not met {e.not_met}, unknown {e.unknown}) — {e.title}" for e in state.shortlist[:8]]
    if len(state.shortlist) > 8:
        lines.append(f"…and {len(state.shortlist) - 8} more in the table.")
    return Reply.text("\n".join(lines) + chips(state))


def _line(e: Entry) -> str:
    return (f"- **{e.nct_id}** (#{e.rank}, score {e.score:.2f}; met {e.met}, not met {e.not_met}, unknown "
            f"{e.unknown}) — {e.title}")


def _verdicts(state: ScreeningState, text: str) -> Reply:
    """The screened trials of the verdict the question asks about (ELIGIBLE unless it names another), with the
    others counted and a way on to explain them."""
    who = state.label or "the patient"
    asked = next((v for v, words in ASKED_VERDICT if re.search(rf"\b(?:{words})\b", text, re.I)), "ELIGIBLE")
    counts = {v: state.count(v) for v in ("ELIGIBLE", "UNCERTAIN", "EXCLUDED", "NOT_RELEVANT")}
    total = sum(counts.values()) or len(state.shortlist)
    word = asked.replace("_", " ")
    listed = state.by_verdict(asked)
    running = " It is still running, so these are the verdicts so far." if state.status == "running" else ""
    head = (f"Of the {total} trials screened for {who} (screening {state.screening_id}, {state.status}), "
            f"**{counts[asked]} {'is' if counts[asked] == 1 else 'are'} {word}**{':' if listed else '.'}")
    # Markdown blocks: a paragraph written right under a list would render inside its last item.
    lines = [head + running, "\n".join(_line(e) for e in listed[:10])]
    if counts[asked] > len(listed[:10]):
        lines.append(f"…and {counts[asked] - len(listed[:10])} more {word} in the table.")
    if asked == "ELIGIBLE" and not listed:
        closest = state.by_verdict("UNCERTAIN")[:3]
        if closest:
            lines.append("The closest are UNCERTAIN: nothing rules them out, but the note leaves criteria open:")
            lines.append("\n".join(_line(e) for e in closest))
    others = [f"{n} {v.replace('_', ' ')}" for v, n in counts.items() if v != asked and n]
    if others:
        lines.append(f"The rest: {', '.join(others)}.")
    if asked == "ELIGIBLE" and listed:
        lines.append("ELIGIBLE means every inclusion criterion is met on the note and no exclusion applies; the "
                     "trial team makes the final call.")
    offer = []
    if counts["EXCLUDED"] and asked != "EXCLUDED":
        offer.append("why a trial was excluded")
    if counts["UNCERTAIN"]:
        offer.append("what an uncertain one still needs")
    if asked == "EXCLUDED" and listed:
        offer.append(f"what would make {({'she': 'her', 'he': 'him'}).get(state.pronoun, 'the patient')} eligible")
    if offer:
        lines.append(f"I can explain {' or '.join(offer)} from the stored criterion results.")
    return Reply.text("\n\n".join(line for line in lines if line) + _verdict_chips(state, asked))


def _verdict_chips(state: ScreeningState, asked: str) -> str:
    out = []
    for verdict in ("EXCLUDED", "UNCERTAIN"):
        if first := state.by_verdict(verdict)[:1]:
            out.append({"label": f"Why is {first[0].nct_id} {verdict.lower()}?",
                        "value": f"Why is {first[0].nct_id} {verdict.lower()}?"})
    if asked == "EXCLUDED" and (first := state.by_verdict("EXCLUDED")[:1]):
        whom = {"she": "her", "he": "him"}.get(state.pronoun, "the patient")
        out.append({"label": "What would make it fit?", "value": f"What would make {whom} eligible for "
                    f"{first[0].nct_id}?"})
    if state.screening_id is not None:
        out.append({"label": "Report for the doctor", "value": "Make the screening report for the doctor"})
    return "\n\n" + marker_json("SUGGESTED_VALUES:", out) if out else ""


@intent(priority=150)
def screening_question(req: DemoRequest) -> Reply | None:
    if req.page != "trialscout" or req.tool_results:
        return None
    text = req.user_text
    state = screening_state(req.page, req.page_context)
    if state.patient_id is None:  # the screening tools are not offered: say what to do first
        asks = SCREEN.search(text) or (PATIENT_REF.search(text) and (EXPLAIN.search(text) or WHAT_WOULD.search(text)))
        return _no_patient() if asks else None
    if not any(req.offers_tool(t) for t in TOOLS):
        return None
    if REPORT.search(text):
        if state.screening_id is None:
            return _no_screening(state, req)
        ids = [m.upper() for m in NCT.findall(text)]
        return Reply.tool("create_screening_report", {"nct_ids": ids}, preface="Building the report from the "
                          "stored verdicts…\n\n")
    place = place_in(text)
    if SITES.search(text) and place and not NEW_SEARCH.search(text):
        if state.screening_id is None:
            return _no_screening(state, req)
        return Reply.tool("find_screening_sites", {"place": place, "radius_km": radius_in(text) or 80})
    if SCREEN.search(text):
        ids = [m.upper() for m in NCT.findall(text)]
        wanted = statuses(text)
        rest = re.search(r"\b(rest|remaining|others?|unscreened|not (?:yet )?screened|all (?:the )?loaded|"
                         r"everything|all of them|the loaded)\b", text, re.I)
        if rest and not ids and not wanted:
            ids = [str(r["nct_id"]) for r in state.loaded]
        return Reply.tool("propose_screening", {"nct_ids": ids[:100], "loaded_status": wanted,
                                                "explanation": text.strip()[:300]})
    edits = profile_edits(text)
    if edits and not re.search(r"\bwhy\b", text, re.I):
        return Reply.tool("propose_profile_edit", {"edits": edits, "explanation": text.strip()[:300]})
    screened_ids = {e.nct_id for e in state.shortlist}
    names_trial = TRIAL_REF.search(text) or any(m.upper() in screened_ids for m in NCT.findall(text))
    about_verdicts = VERDICT_TALK.search(text) or (PATIENT_FIT.search(text) and PATIENT_REF.search(text))
    hypothetical = any(m.group(0).lower() != "qualify" for m in WHAT_WOULD.finditer(text))
    if (AGGREGATE.search(text) and about_verdicts and not names_trial and not NCT.search(text) and not hypothetical
            and not re.search(r"\bwhy\b|\bcolumns?\b", text, re.I) and not NEW_SEARCH.search(text)):
        if state.screening_id is None:
            return _no_screening(state, req)
        return _verdicts(state, text) if state.shortlist else _overview(state)
    asks = WHAT_WOULD.search(text) or EXPLAIN.search(text)
    if asks and (names_trial or PATIENT_REF.search(text)) and not re.search(r"\bcolumns?\b", text, re.I):
        if state.screening_id is None:
            return _no_screening(state, req)
        nct_id, rank = named_trial(text, state)
        if nct_id is None and rank is not None:
            return Reply.text(f"The shortlist has {len(state.shortlist)} trials, so there is no #{rank}."
                              + chips(state))
        if nct_id is None:
            if OVERVIEW.search(text):
                return _overview(state)
            nct_id = state.shortlist[0].nct_id if state.shortlist else None
        if nct_id is None:
            return _overview(state)
        return Reply.tool("get_screening_trial", {"nct_id": nct_id})
    if OVERVIEW.search(text) and state.screening_id is not None and (
            PATIENT_REF.search(text) or re.search(r"\b(screen\w*|shortlist|verdicts?)\b", text, re.I)):
        return _overview(state)
    return None
