"""The demo model in the research stream editor (page `edit_research_stream`): help for the admin who
writes a stream's definition and chat instructions, as the editor's own cards.

- "Suggest chat instructions": a `chat_instructions_suggestion` drafted from the stream's name and
  description (Accept fills the instructions editor, unsaved).
- "What would make these instructions clearer?": a review of the current draft, point by point, and the
  draft rewritten as short rules in the same card.
- "Check my stream definition": `validation_results` (on the definition tab; elsewhere the findings in
  words and an action to switch tab), with a `schema_proposal` when a field can be filled in.

Everything is read from the page context the editor sends (the same text Claude gets); nothing is invented
beyond the stream's own words.
"""

from __future__ import annotations

import json
import re
from typing import Any

from backend.demo.brain import DemoRequest, intent, marker_json
from backend.demo.wire import Reply

SUGGEST = re.compile(r"\b(suggest|draft|propose|write|create|generate)\b.*\binstructions?\b", re.I)
REVIEW = re.compile(r"\binstructions?\b.*\b(clear\w*|improv\w*|better|review|feedback|tighten|problems?|wrong)\b|"
                    r"\b(clear\w*|improv\w*|review|tighten)\b.*\binstructions?\b", re.I)
CHECK = re.compile(r"\b(check|validat\w*|review|audit|problems?|issues?|wrong)\b.*\b(definition|stream|schema|setup)\b|"
                   r"\b(definition|stream)\b.*\b(ok|okay|right|complete|valid)\b", re.I)
VAGUE = re.compile(r"\b(good|relevant|appropriate|important|interesting|properly|nice|etc\.?|things?|stuff)\b", re.I)


def _section(context: str, label: str) -> str:
    match = re.search(rf"^{label}:\n(.*?)(?=\n\n[A-Z][A-Z ]+:\n|\Z)", context, re.S | re.M)
    return match.group(1).strip() if match else ""


def _definition(context: str) -> dict[str, Any]:
    text = _section(context, "CURRENT DEFINITION")
    try:
        value = json.loads(text) if text else {}
    except json.JSONDecodeError:
        value = {}
    return value if isinstance(value, dict) else {}


def _stream_name(context: str, definition: dict[str, Any]) -> str:
    match = re.search(r"^- Stream: (.*)$", context, re.M)
    return str(definition.get("name") or (match.group(1) if match else "") or "this stream").strip()


def _sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+|\n+", text)
    return [p.strip(" -•*\t") for p in parts if p.strip(" -•*\t")]


def draft_instructions(name: str, description: str) -> str:
    topic = description.strip().rstrip(".") if description.strip() else name
    return "\n".join([
        f"- This stream is about: {topic}. Keep answers to that scope; say so when a question falls outside it.",
        "- When building PubMed queries or trial searches, start from the stream's topic and its default "
        "search, and say what each added term narrows.",
        "- Prefer the most recent and the highest level of evidence (systematic reviews, randomised trials) "
        "and name the study type of each article you cite.",
        "- Cite articles by PMID and trials by NCT id; never state a finding that is not in the loaded rows "
        "or a tool result.",
        "- When a request is ambiguous, ask one short question before searching.",
    ])


def review(draft: str, name: str, description: str) -> tuple[list[str], str]:
    """Findings on a draft, and the draft as short rules."""
    sentences = _sentences(draft)
    findings = []
    if not sentences:
        return ["There are no instructions yet: the assistant behaves as it would outside the stream."], \
            draft_instructions(name, description)
    if (vague := sorted({m.group(0).lower() for m in VAGUE.finditer(draft)})):
        findings.append(f"Vague words ({', '.join(vague)}): say what counts, e.g. which study types or years.")
    long = [s for s in sentences if len(s.split()) > 30]
    if long:
        findings.append(f"{len(long)} sentence(s) over 30 words: one rule per line is easier to follow.")
    if not re.search(r"\b(PMID|NCT|cite|source)\b", draft, re.I):
        findings.append("Nothing says how to cite: ask for PMIDs and NCT ids, so answers can be checked.")
    words = {w for w in re.findall(r"[a-z]{5,}", (name + " " + description).lower())}
    if words and not any(w in draft.lower() for w in words):
        findings.append("The stream's topic is not named: state it, so out-of-scope questions are recognised.")
    if not findings:
        findings.append("The draft is clear; the rewrite only puts one rule on each line.")
    rules = [f"- {s.rstrip('.')}." for s in sentences]
    if words and not any(w in draft.lower() for w in words):
        rules.insert(0, f"- This stream is about: {(description or name).strip().rstrip('.')}.")
    if not re.search(r"\b(PMID|NCT|cite|source)\b", draft, re.I):
        rules.append("- Cite articles by PMID and trials by NCT id.")
    return findings, "\n".join(rules)


def check_definition(context: str, definition: dict[str, Any]) -> dict[str, list[str]]:
    name = str(definition.get("name") or "").strip()
    description = str(definition.get("description") or "").strip()
    errors, warnings, advice = [], [], []
    if not name:
        errors.append("The stream has no name.")
    if not description:
        errors.append("The description is empty: the assistant and the retrieval setup have nothing to work from.")
    elif len(description.split()) < 8:
        warnings.append(f"The description is short ({len(description.split())} words): state the purpose, the "
                        "topics and the entities (conditions, drugs, populations) it covers.")
    if not _section(context, "RETRIEVAL SETUP"):
        warnings.append("No retrieval setup: set a default PubMed query and trial search (Retrieval tab).")
    if not _section(context, "CHAT INSTRUCTIONS DRAFT"):
        advice.append("No chat instructions yet: ask me to suggest some.")
    if not errors and not warnings:
        advice.append("The definition has a name, a description and a retrieval setup.")
    return {"errors": errors, "warnings": warnings, "suggestions": advice}


@intent(priority=120)
def stream_editor(req: DemoRequest) -> Reply | None:
    if req.page != "edit_research_stream" or req.tool_results:
        return None
    text, context = req.user_text, req.page_context
    definition = _definition(context)
    name = _stream_name(context, definition)
    description = str(definition.get("description") or "")
    if REVIEW.search(text) and not SUGGEST.search(text):
        draft = _section(context, "CHAT INSTRUCTIONS DRAFT") or (req.stream_instructions or ("", ""))[1]
        findings, rewritten = review(draft, name, description)
        card = {"instructions": rewritten, "explanation": "The current draft as one rule per line, with what the "
                "review found missing added."}
        return Reply.text("What would make these instructions clearer:\n\n" + "\n".join(f"- {f}" for f in findings)
                          + "\n\nAccept puts the rewrite in the instructions editor (not saved until you save)."
                          + "\n\n" + marker_json("CHAT_INSTRUCTIONS:", card))
    if SUGGEST.search(text):
        card = {"instructions": draft_instructions(name, description),
                "explanation": f"A starting point drafted from the stream's name and description ({name})."}
        return Reply.text(f"Here are chat instructions for “{name}”, drafted from its definition. Accept puts them "
                          "in the instructions editor; edit and save when they read right."
                          + "\n\n" + marker_json("CHAT_INSTRUCTIONS:", card))
    if CHECK.search(text):
        result = check_definition(context, definition)
        if req.offers_marker("VALIDATION_RESULTS:"):
            body = "I checked the stream definition.\n\n" + marker_json("VALIDATION_RESULTS:", result)
            if req.offers_marker("SCHEMA_PROPOSAL:") and name and len(description.split()) < 8:
                proposed = (f"{description.rstrip('.') or name}: research on {name}, covering its conditions, "
                            "treatments and populations; articles and trials the team follows.")
                body += "\n\n" + marker_json("SCHEMA_PROPOSAL:", {
                    "proposed_changes": {"description": proposed}, "confidence": "low",
                    "reasoning": "The description is short; this states purpose and scope in the stream's own "
                                 "words. Edit the topics to be specific."})
            return Reply.text(body)
        lines = [f"- {kind[:-1] if kind.endswith('s') else kind}: {item}"
                 for kind, items in result.items() for item in items]
        return Reply.text("I checked the stream definition:\n\n" + "\n".join(lines)
                          + "\n\n" + marker_json("SUGGESTED_ACTIONS:", [
                              {"label": "Open the definition tab", "action": "switch_tab", "handler": "client",
                               "data": {"tab": "semantic"}}]))
    return None

