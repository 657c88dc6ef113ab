"""The demo model's text columns: a short answer to a column's question from a record's fields (the age
range, the sample size, the primary endpoint, the design…), with the lines it read as evidence."""

from __future__ import annotations

import re
from typing import NamedTuple

from backend.demo.record_text import Record, sentences
from backend.demo.records import AGE_GROUPS_OLD, AGE_GROUPS_YOUNG, field_evidence, find_any


class Extraction(NamedTuple):
    answer: str | None
    reasoning: str
    evidence: list[str]


_COUNT = re.compile(r"\b(\d{1,3}(?:,\d{3})+|\d+)\s+(?:\w+\s+){0,2}?(?:patients|participants|subjects|women|men|"
                    r"children|adults|individuals|cases|infants|volunteers|persons|people)\b", re.I)


def _first_field(record: Record, *labels: str) -> Extraction | None:
    for label in labels:
        if record.fields.get(label):
            return Extraction(record.fields[label][:300], f"From the record's {label} field.",
                              field_evidence(record, label))
    return None


_DESIGNS = (
    (r"\bmeta-?analys", "Meta-analysis"), (r"\bsystematic review", "Systematic review"),
    (r"\brandomi[sz]ed", "Randomized trial"), (r"\bcase[- ]control\b", "Case-control study"),
    (r"\bcross-sectional\b", "Cross-sectional study"), (r"\bretrospective\b", "Retrospective study"),
    (r"\bprospective\b", "Prospective study"), (r"\bcohort\b", "Cohort study"),
    (r"\bcase report\b|\bwe report a case\b|\bwe describe a (?:patient|case)\b", "Case report"),
    (r"\bphase (?:i{1,3}|[1-3])\b", "Clinical trial"), (r"\bmice\b|\brats?\b|\bmurine\b", "Animal study"),
    (r"\bin vitro\b|\bcell lines?\b", "Laboratory study"), (r"\breview\b", "Review"),
)


def extract(question: str, record: Record) -> Extraction | None:
    """A short answer to a text column's question, or None when no field-based rule applies."""
    q = question.lower()
    if re.search(r"\bage range|\beligible ages?|\bage limits?|\bhow old", q):
        if record.kind == "trial":
            if record.partial:
                return Extraction(None, "This record has no eligibility details.", [])
            low, high = record.fields.get("minimum age", "no limit"), record.fields.get("maximum age", "no limit")
            answer = ("No age limits" if "no limit" in low and "no limit" in high else
                      f"{low} and older" if "no limit" in high else f"Up to {high}" if "no limit" in low
                      else f"{low} to {high}")
            return Extraction(answer, "From the minimum and maximum age fields.",
                              field_evidence(record, "minimum age") + field_evidence(record, "maximum age"))
        hit = find_any(["aged", "age "], sentences(record.body))
        if hit:
            return Extraction(hit[:300], "The abstract states the participants' ages.", [hit])
        groups = [m for m in record.values("mesh terms") if m.lower() in
                  {"adult", "middle aged", "young adult", *AGE_GROUPS_OLD, *AGE_GROUPS_YOUNG}]
        return Extraction(", ".join(groups) if groups else None, "From the MeSH age groups." if groups else
                          "Neither the abstract nor the MeSH terms give ages.", field_evidence(record, "mesh terms")
                          if groups else [])
    if re.search(r"\bsample size|\bhow many (?:participants|patients|subjects)|\benrol", q):
        if record.kind == "trial":
            return _first_field(record, "enrollment") or Extraction(None, "The record gives no enrollment.", [])
        for sentence in sentences(record.body):
            if m := _COUNT.search(sentence):
                return Extraction(m.group(0), "The abstract states how many took part.", [sentence])
        return Extraction(None, "The abstract does not state a number of participants.", [])
    if re.search(r"\bprimary (?:end ?point|outcome)", q):
        if record.outcomes:
            return Extraction(record.outcomes[0][:300], "The record's first primary outcome.", record.outcomes[:1])
        hit = find_any(["primary end", "primary outcome", "primary endpoint"], sentences(record.body))
        return Extraction(hit[:300] if hit else None, "The abstract names it." if hit else
                          "The record names no primary endpoint.", [hit] if hit else [])
    if re.search(r"\b(?:study )?design\b|\bstudy type\b", q):
        if record.kind == "article":
            types = [t for t in record.values("publication types") if t.lower() not in
                     {"journal article", "english abstract", "comparative study"}
                     and not t.lower().startswith("research support")]
            if types:
                return Extraction(", ".join(types), "From the publication types.",
                                  field_evidence(record, "publication types"))
            for pattern, design in _DESIGNS:
                hit = next((s for s in sentences(record.fields.get("title", "") + "\n" + record.body)
                            if re.search(pattern, s, re.I)), None)
                if hit:
                    return Extraction(design, "The title or abstract describes the design.", [hit])
            return Extraction(None, "Neither the publication types nor the abstract name a design.", [])
        parts = [record.fields.get("study type", ""), record.fields.get("phase", "")]
        return Extraction(", ".join(p for p in parts if p) or None, "From the study type and phase fields.",
                          field_evidence(record, "study type"))
    if re.search(r"\b(?:which|what) drug|\bdrugs? (?:studied|tested)|\bintervention", q):
        if record.kind == "trial":
            return _first_field(record, "interventions") or Extraction(None, "The record lists no intervention.", [])
        return None
    if re.search(r"\bexclusion criteria", q) and record.kind == "trial":
        items = sentences(record.exclusion)[:4]
        return Extraction("; ".join(i[:120] for i in items) if items else None, "The first exclusion criteria."
                          if items else "The record carries no exclusion criteria.", items[:4])
    if re.search(r"\binclusion criteria", q) and record.kind == "trial":
        items = sentences(record.inclusion)[:4]
        return Extraction("; ".join(i[:120] for i in items) if items else None, "The first inclusion criteria."
                          if items else "The record carries no inclusion criteria.", items[:4])
    for pattern, labels in ((r"\bsponsor", ("sponsor",)), (r"\bphase\b", ("phase",)),
                            (r"\bstatus\b", ("overall status",)), (r"\bconditions?\b", ("conditions",)),
                            (r"\bjournal\b", ("journal",)), (r"\bsex\b|\bgender", ("sex",))):
        if re.search(pattern, q) and (found := _first_field(record, *labels)):
            return found
    if re.search(r"\bcountr(?:y|ies)|\blocations?\b|\bsites?\b", q) and record.kind == "trial":
        return Extraction(None, "The record as sent carries no locations.", [])
    if re.search(r"\b(?:main |key )?(?:finding|conclusion|result)s?\b", q) and record.body:
        lines = sentences(record.body)
        hit = next((s for s in lines if re.match(r"(?:CONCLUSIONS?|INTERPRETATION)\b", s)), None) or lines[-1]
        return Extraction(re.sub(r"^[A-Z ]+:\s*", "", hit)[:300], "The abstract's conclusion.", [hit])
    return None
