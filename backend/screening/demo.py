"""The demo model's answers to the screening requests (`backend.screening.prompts`), from the note's text
alone: INGEST by the local rules, PRESCREEN by the planned searches, the judgement by `demo_judge`.

`demo_reply(body)` takes a Messages API request body and returns ("text", reply text), ("tool", search
input) or None when the request is not a screening request; the app's demo transport wraps the answer in a
Messages API reply, so the engine runs the same SDK path with and without a key.
"""

from __future__ import annotations

import json
from typing import Any

from backend.criteria.prompts import CRITERION_TAG, parse_request
from backend.screening.demo_judge import judge
from backend.screening.ingest import local_profile
from backend.screening.note_reader import read_note
from backend.screening.prescreen import plan_reply
from backend.screening.prompts import INGEST_TAG, JUDGE_TAG, PRESCREEN_TAG, read_block, read_trial_block


def _system(body: dict[str, Any]) -> str:
    system = body.get("system") or ""
    return "\n\n".join(b.get("text", "") for b in system) if isinstance(system, list) else str(system)


def _first_user_text(body: dict[str, Any]) -> str:
    for message in body.get("messages") or []:
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")
    return ""


def _judge_reply(text: str) -> str:
    note = read_block("patient_note", text) or ""
    trial = read_trial_block(text)
    entries = []
    for cid, kind, criterion in (trial[1] if trial else []):
        j = judge(note, criterion, kind)
        entries.append({"id": cid, "answer": j.answer, "reasoning": j.reasoning, "evidence": j.evidence})
    return json.dumps({"criteria": entries})


def demo_reply(body: dict[str, Any]) -> tuple[str, Any] | None:
    system = _system(body).lstrip()
    tag = system.split("\n", 1)[0].strip()
    if tag == INGEST_TAG:
        note = read_block("patient_note", _first_user_text(body)) or ""
        return "text", local_profile(note).model_dump_json()
    if tag == JUDGE_TAG:
        return "text", _judge_reply(_first_user_text(body))
    if tag == PRESCREEN_TAG:
        return plan_reply(body)
    if tag == CRITERION_TAG:  # the per-criterion evaluator over a patient note (`eval criteria`)
        request = parse_request(system, _first_user_text(body))
        if request is not None and request.criterion_type is not None:
            j = judge(request.document, request.text, request.criterion_type)
            evidence = [f"{i}. {s}" for i, s in _sentences(request.document, j.evidence)]
            return "text", json.dumps({"answer": j.answer, "reasoning": j.reasoning, "evidence": evidence})
    return None


def _sentences(note: str, indices: list[int]) -> list[tuple[int, str]]:
    sentences = read_note(note).sentences
    return [(i, sentences[i]) for i in indices if 0 <= i < len(sentences)]
