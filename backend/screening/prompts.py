"""The screening requests' wire format: system prompts, message layouts and the JSON replies, for INGEST,
PRESCREEN and the per-trial judgement. One module so the engine and the demo model that answers these
requests (`backend.screening.demo`) cannot drift apart; the first line of each system prompt is a tag by
which the demo recognises the request.
"""

from __future__ import annotations

import re
from typing import Any

from backend.screening.models import Criterion, PatientProfile

INGEST_TAG = "[colleague:screening-ingest v1]"
PRESCREEN_TAG = "[colleague:screening-prescreen v1]"
JUDGE_TAG = "[colleague:screening-judge v9]"

INGEST_SYSTEM = f"""{INGEST_TAG}
You read one patient's clinical note and extract what a clinical-trial screener needs. Reply with exactly
one JSON object and nothing else:
{{"age": years as a number or null, "sex": "female" | "male" | null,
 "conditions": ["main condition first, as a trial registry would name it"],
 "key_facts": {{"stage": str|null, "biomarkers": [str], "prior_therapies": [str], "current_therapies": [str],
   "comorbidities": [str], "performance_status": str|null, "labs": [str], "location": str|null}},
 "keywords": ["3 to 8 search terms for trials that would treat or study this patient"],
 "summary": "one line", "language": "ISO 639-1 code of the note's language"}}
Write the values in English whatever the note's language. Only what the note says; never guess. A therapy
the patient received and stopped (or progressed on) is a prior therapy, not a keyword: trials are searched
for what the patient may receive next.
"""

PRESCREEN_SYSTEM = f"""{PRESCREEN_TAG}
You search ClinicalTrials.gov for trials this patient could join, with the search_trials tool (and
get_trial_details for a promising trial). Search by the patient's conditions first, then narrower terms
(stage, biomarkers) and broader synonyms. Never search a therapy the patient already received as the
wanted intervention. You have a budget of tool calls; when it is spent, stop and reply with a one-line
summary of your strategy and no tool call.
"""

JUDGE_SYSTEM = f"""{JUDGE_TAG}
You check every eligibility criterion of one clinical trial against one patient's note, the way an expert
trial screener would. For each criterion answer the question "is this criterion true of the patient?":
- "yes": the note shows it is true; "no": the note shows it is false;
- "unknown": the note does not say enough (e.g. a lab value that is not reported). Never guess;
- "not_applicable": it cannot apply to this patient (e.g. pregnancy for a male patient).
For an exclusion criterion answer whether the patient HAS the excluded characteristic ("yes" = the
patient would be excluded). When the note does not mention a medically important condition at all you may
assume the patient does not have it. Evidence is the numbers of the note's sentences that decide.

Reply with exactly one JSON object and nothing else:
{{"criteria": [{{"id": "<the criterion's id>", "answer": "yes"|"no"|"unknown"|"not_applicable",
  "reasoning": "one or two sentences", "evidence": [sentence numbers]}}, ...]}}
with one entry per criterion id, in the order given.
"""

SEARCH_TOOL: dict[str, Any] = {
    "name": "search_trials",
    "description": "Search ClinicalTrials.gov. Returns matching trials (NCT id, title, phase, status, conditions).",
    "input_schema": {"type": "object", "properties": {
        "condition": {"type": "string"}, "intervention": {"type": "string"},
        "eligibility_keywords": {"type": "string"},
        "status": {"type": "array", "items": {"type": "string"}},
        "phase": {"type": "array", "items": {"type": "string"}},
        "sex": {"type": "string", "enum": ["FEMALE", "MALE", "ALL"]},
        "min_age": {"type": "integer"}, "max_age": {"type": "integer"},
        "page_size": {"type": "integer", "maximum": 100}}},
}
DETAILS_TOOL: dict[str, Any] = {
    "name": "get_trial_details",
    "description": "Eligibility criteria, ages and sex of one trial.",
    "input_schema": {"type": "object", "properties": {"nct_id": {"type": "string"}}, "required": ["nct_id"]},
}


def criterion_id(criterion: Criterion) -> str:
    return f"{'inc' if criterion.kind == 'inclusion' else 'exc'}-{criterion.index}"


def note_block(numbered_note: str) -> str:
    return f"<patient_note>\n{numbered_note}\n</patient_note>"


def trial_block(nct_id: str, title: str, criteria: list[Criterion]) -> str:
    lines = [f"<trial nct_id=\"{nct_id}\">", f"Title: {title}", "Criteria:"]
    lines += [f"[{criterion_id(c)}] ({c.kind}) {c.text}" for c in criteria]
    lines.append("</trial>")
    return "\n".join(lines)


def prescreen_message(profile: PatientProfile, max_tool_calls: int, n: int) -> str:
    return (f"<patient_profile>\n{profile.model_dump_json()}\n</patient_profile>\n"
            f"Find up to {n} candidate trials. Tool budget: {max_tool_calls} calls.")


def read_block(name: str, text: str) -> str | None:
    match = re.search(rf"<{name}[^>]*>\n?(.*?)\n?</{name}>", text, re.S)
    return match.group(1) if match else None


def read_trial_block(text: str) -> tuple[str, list[tuple[str, str, str]]] | None:
    """(nct_id, [(id, kind, text)]) from a trial block; None when the text holds none."""
    match = re.search(r'<trial nct_id="([^"]*)">\n(.*?)\n</trial>', text, re.S)
    if not match:
        return None
    items = re.findall(r"^\[((?:inc|exc)-\d+)\] \((inclusion|exclusion)\) (.*)$", match.group(2), re.M)
    return match.group(1), [(i, k, t) for i, k, t in items]


def profile_from_json(obj: dict[str, Any]) -> PatientProfile:
    """A profile from the model's JSON, tolerant of extra keys and loose types."""
    raw_facts = obj.get("key_facts")
    facts: dict[str, Any] = raw_facts if isinstance(raw_facts, dict) else {}

    def strings(value: Any) -> list[str]:
        items = value if isinstance(value, list) else ([value] if value else [])
        return [str(v).strip() for v in items if isinstance(v, (str, int, float)) and str(v).strip()][:20]

    def one(value: Any) -> str | None:
        return str(value).strip() or None if isinstance(value, (str, int, float)) else None

    age = obj.get("age")
    sex = str(obj.get("sex") or "").strip().lower()
    return PatientProfile.model_validate({
        "age": float(age) if isinstance(age, (int, float)) and 0 <= age <= 130 else None,
        "sex": sex if sex in ("female", "male") else None,
        "conditions": strings(obj.get("conditions")), "keywords": strings(obj.get("keywords")),
        "summary": one(obj.get("summary")) or "", "language": one(obj.get("language")),
        "warnings": strings(obj.get("warnings")),
        "key_facts": {"stage": one(facts.get("stage")), "biomarkers": strings(facts.get("biomarkers")),
                      "prior_therapies": strings(facts.get("prior_therapies")),
                      "current_therapies": strings(facts.get("current_therapies")),
                      "comorbidities": strings(facts.get("comorbidities")),
                      "performance_status": one(facts.get("performance_status")),
                      "labs": strings(facts.get("labs")), "location": one(facts.get("location"))},
    })

