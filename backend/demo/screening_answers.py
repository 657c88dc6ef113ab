"""The demo model's answers after a screening tool ran: the stored criterion results in words (why the
verdict; or what would have to change for the patient to be eligible), the sites found, and the cards
proposed or the report built. Each answer states only what the tool returned."""

from __future__ import annotations

import re
from dataclasses import dataclass

from backend.demo.brain import DemoRequest, intent
from backend.demo.screening_chat import TOOLS, WHAT_WOULD, chips
from backend.demo.screening_state import screening_state
from backend.demo.wire import Reply

_LINE = re.compile(r"^- \[(inclusion|exclusion) (\d+)\] (.*?) => (MET|NOT_MET|UNKNOWN) \(([^)]*)\)"
                   r"(?:\. Reasoning: (.*?))?(?: Evidence: (.*))?$")


@dataclass
class Line:
    kind: str
    text: str
    label: str
    state: str
    reasoning: str
    evidence: str


def _parse(result: str) -> tuple[str, list[Line], list[Line], str]:
    """(verdict, deciding criteria, other criteria, the trial's note) of a `get_screening_trial` result."""
    verdict = re.search(r"Verdict: (\w+)", result)
    deciding: list[Line] = []
    other: list[Line] = []
    target = deciding
    note = ""
    for raw in result.splitlines():
        if raw == "OTHER CRITERIA:":
            target = other
        elif raw.startswith("Note: "):
            note = raw.removeprefix("Note: ")
        elif m := _LINE.match(raw):
            target.append(Line(m.group(1), m.group(3), m.group(4), m.group(5), m.group(6) or "", m.group(7) or ""))
    return verdict.group(1) if verdict else "", deciding, other, note


def _item(line: Line) -> str:
    out = f"- *{line.kind.capitalize()}:* {line.text} — **{line.state}**."
    if line.reasoning:
        out += f" {line.reasoning}"
    if line.evidence:
        out += f"\n  Evidence from the note: {line.evidence}"
    return out


def _why(nct_id: str, verdict: str, deciding: list[Line], other: list[Line], note: str) -> str:
    if verdict == "EXCLUDED":
        lines = [f"**{nct_id} is EXCLUDED** because of {len(deciding)} criterion{'' if len(deciding) == 1 else 'a'} "
                 "in the stored results:"] + [_item(x) for x in deciding]
    elif verdict == "UNCERTAIN":
        lines = [f"**{nct_id} is UNCERTAIN**: nothing rules the patient out, but the note does not settle "
                 f"{len(deciding)} criterion{'' if len(deciding) == 1 else 'a'}:"] + [_item(x) for x in deciding]
        if not deciding and note:
            lines.append(note)
    elif verdict == "ELIGIBLE":
        lines = [f"**{nct_id} looks ELIGIBLE**: every inclusion criterion is met and no exclusion applies. "
                 "The inclusions met:"] + [_item(x) for x in deciding[:8]]
    else:
        lines = [f"**{nct_id} is NOT RELEVANT**: its topic does not match the patient's conditions"
                 + (f" ({note})" if note else "") + "."]
    if not deciding and not other and verdict != "NOT_RELEVANT":
        lines.append(note or "No criterion results are stored for this trial.")
    return "\n".join(lines)


def _what_would(nct_id: str, verdict: str, deciding: list[Line], other: list[Line], who: str) -> str:
    blockers = [x for x in deciding + other if x.label == "NOT_MET"]
    unknown = [x for x in deciding + other if x.label == "UNKNOWN"]
    if verdict == "ELIGIBLE":
        return f"{who.capitalize()} already looks eligible for **{nct_id}** on the stored results; the trial team " \
               "makes the final call."
    if verdict == "NOT_RELEVANT":
        return f"**{nct_id}** is not about {who}'s condition, so no change in the profile would make it a fit."
    lines = [f"For **{nct_id}** ({verdict}), the stored results say what would have to be true:"]
    for x in blockers:
        need = "would need to be met" if x.kind == "inclusion" else "would have to no longer apply"
        lines.append(f"- {x.text} — {need} (now: {x.state})." + (f" {x.reasoning}" if x.reasoning else ""))
    for x in unknown:
        lines.append(f"- {x.text} — the note would need to show this (now: not enough information).")
    if not blockers and not unknown:
        lines.append("- nothing in the stored criteria; the verdict comes from the trial record itself.")
    whose = {"she": "her", "he": "his"}.get(who, "the patient's")
    lines.append("Some of these may not be things that can change (a diagnosis, a past treatment); a clinician "
                 f"can say which. If {whose} record already answers one, tell me and I'll propose a profile edit.")
    return "\n".join(lines)


@intent(priority=95)
def screening_answer(req: DemoRequest) -> Reply | None:
    results = [r for r in req.tool_results if r[0] in TOOLS]
    if not results:
        return None
    state = screening_state(req.page, req.page_context)
    parts = []
    for name, tool_input, text, is_error in results:
        if is_error:
            parts.append(f"I couldn't do that from the stored screening: {text}")
        elif name == "get_screening_trial":
            verdict, deciding, other, note = _parse(text)
            found = re.search(r"NCT\d{8}", text)
            nct_id = found.group(0) if found else str(tool_input.get("nct_id") or "this trial")
            parts.append(_what_would(nct_id, verdict, deciding, other, state.pronoun)
                         if WHAT_WOULD.search(req.user_text) else _why(nct_id, verdict, deciding, other, note))
        elif name == "find_screening_sites":
            parts.append(text)
        elif name == "propose_screening":
            parts.append(text.replace("Proposed to the user as a card (starts when they accept): ", "I've put ")
                         .rstrip(".") + " on a card: accept it to start the screening." if "Proposed" in text else text)
        elif name == "propose_profile_edit":
            parts.append(text.replace("Proposed to the user as a card (not saved until they accept): ",
                                      "I've proposed this profile edit on a card (nothing is saved until you "
                                      "accept it): ") if "Proposed" in text else text)
        else:
            parts.append(text.replace(" The card shows both links.", "") + " Open it from the card (HTML or PDF).")
    return Reply.text("\n\n".join(parts) + chips(state))
