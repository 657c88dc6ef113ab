"""Profile edits the demo model reads off a request to change the loaded patient's profile ("she's
actually 64", "ECOG is 2 now", "add EGFR exon 19 deletion to her biomarkers", "she also had
carboplatin", "remove diabetes from her comorbidities"): the `edits` of `propose_profile_edit`."""

from __future__ import annotations

import re
from typing import Any

from backend.demo.screening_state import SUBJECT

EDIT_CUE = re.compile(r"\b(change|update|set|correct|edit|fix|actually|now|add|remove|delete|drop|record|note that|"
                      r"mark|put|include|should (?:be|say)|is wrong|isn't|not right|also (?:had|has|received|took|"
                      r"got|was)|instead)\b|\bprofile\b|\b(?:she|he|the patient)(?:'s| is) (?:actually |really |now )?"
                      r"\d{1,3}\b", re.I)
LISTS = {"biomarker": "biomarkers", "condition": "conditions", "diagnos": "conditions", "keyword": "keywords",
         "comorbidit": "comorbidities", "other condition": "comorbidities", "prior therap": "prior_therapies",
         "prior treatment": "prior_therapies", "previous treatment": "prior_therapies", "history": "prior_therapies",
         "current therap": "current_therapies", "current treatment": "current_therapies",
         "medication": "current_therapies", "lab": "labs", "test": "labs"}
_LIST_WORDS = "|".join(sorted(map(re.escape, LISTS), key=len, reverse=True))


def _list_field(words: str) -> str | None:
    low = words.lower()
    return next((f for k, f in sorted(LISTS.items(), key=lambda kv: -len(kv[0])) if k in low), None)


def _clean(value: str) -> str:
    return re.sub(r"^(?:the|a|an|her|his|their)\s+", "", value.strip(" .,;:\"'"), flags=re.I).strip()


def profile_edits(text: str) -> list[dict[str, Any]]:
    """The edits the text asks for; [] when it asks for none (or no edit cue is there)."""
    if not EDIT_CUE.search(text):
        return []
    edits: list[dict[str, Any]] = []
    low = text.lower()
    for hit in re.finditer(rf"\b(add|include|put|record|remove|delete|drop)\s+(.+?)\s+(?:to|in|into|from|under|as)\s+"
                         rf"(?:her|his|their|the)?\s*(?:patient'?s?\s+)?((?:{_LIST_WORDS})\w*(?: \w+)?)", text, re.I):
        target = _list_field(hit.group(3))
        if target:
            mode = "remove" if hit.group(1).lower() in ("remove", "delete", "drop") else "add"
            edits.append({"field": target, "mode": mode, "value": [_clean(v) for v in
                                                                re.split(r",| and ", hit.group(2)) if _clean(v)]})
    if m := re.search(r"\b(?:age\b[^\d]{0,25}|is\s+(?:actually\s+|now\s+)?|she's\s+(?:actually\s+)?|he's\s+"
                      r"(?:actually\s+)?)(\d{1,3})(?!\s*(?:mg|%|kg|cm))\b", low):
        if 0 < int(m.group(1)) <= 120 and not re.search(r"\b(ecog|stage|score|grade|creatinine)\b[^.]{0,15}"
                                                         + re.escape(m.group(1)), low):
            edits.append({"field": "age", "mode": "set", "value": float(m.group(1))})
    elif m := re.search(r"\b(\d{1,3})[- ]?(?:years?[- ]old|y/?o|yo)\b", low):
        edits.append({"field": "age", "mode": "set", "value": float(m.group(1))})
    if m := re.search(r"\becog(?: performance status| ps)?\D{0,12}([0-4])\b", low):
        edits.append({"field": "performance_status", "mode": "set", "value": f"ECOG {m.group(1)}"})
    if m := re.search(r"\bstage\s+(iv|iii|ii|i|[1-4])([abc])?\b", low):
        edits.append({"field": "stage", "mode": "set", "value": f"{m.group(1).upper()}{(m.group(2) or '').upper()}"})
    if m := re.search(rf"\b(?:{SUBJECT})\s+(?:also\s+)?(?:had|received|took|got|was treated with|"
                      r"has had|completed)\s+([\w\s-]+?)(?:\s+(?:in|last|before|until|for)\b|[.,;]|$)", text, re.I):
        if not any(e["field"] == "prior_therapies" for e in edits) and not re.search(r"\d", m.group(1)):
            edits.append({"field": "prior_therapies", "mode": "add", "value": [_clean(m.group(1))]})
    if m := re.search(r"\b(?:lives in|based in|location (?:is|to|should be))\s+([A-Z][\w .,'-]+?)(?:[.;]|$)", text):
        edits.append({"field": "location", "mode": "set", "value": m.group(1).strip(" ,")})
    if re.search(r"\b(?:sex|gender)\b.{0,20}\b(female|woman)\b|\b(?:is|she's) a woman\b", low):
        edits.append({"field": "sex", "mode": "set", "value": "female"})
    elif re.search(r"\b(?:sex|gender)\b.{0,20}\b(male|man)\b|\b(?:is|he's) a man\b", low):
        edits.append({"field": "sex", "mode": "set", "value": "male"})
    return [e for e in edits if e["value"] not in ([], "", None)]
