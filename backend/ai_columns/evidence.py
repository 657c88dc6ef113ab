"""Where an AI column's evidence sits in its record, and how much a verdict can rest on it.

The server, not the model, names a quote's section: each quote is looked up in the very document the model
was given (`service.trial_document` / `article_document`), so a trial's quote is `inclusion`, `exclusion` or
somewhere else (`summary`, `conditions`, `title`, `details`), an article's `title`, `abstract` or `details`;
`None` when the quote is not in the record at all. The same lookup serves the demo model and a real one.

`qualify` then says whether a Yes/No needs a qualifier:
- `conditional`: the criterion applies to only part of what it names; the quote carries a restriction
  ("untreated", "unless", "stable for 4 weeks", "controlled", "within 6 months"…). A line of the record that
  excludes only untreated metastases neither plainly allows nor plainly excludes metastases.
- `needs_review`: the verdict is not backed by the record: none of its quotes is in the record, a Yes quotes
  nothing (a No may rest on the record's silence: "no placebo among the interventions"), or its only
  evidence is a trial's exclusion line behind a Yes to a criterion that is not about exclusion (or an
  inclusion line behind a Yes to one that is).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Section = Literal["inclusion", "exclusion", "title", "abstract", "summary", "conditions", "details"]
Qualifier = Literal["conditional", "needs_review"]

# "Inclusion Criteria:", "Key Exclusion Criteria", "General non-inclusion criteria :", "EXCLUSION CRITERIA FOR …:"
# (or "exclusion criteria: history of …" with the first criterion on the header's line)
_CRITERIA_HEADER = re.compile(r"^[\s\-*•]*(?:[\w,'/()]+\s+){0,4}?(non[- ]inclusion|exclusion|inclusion)\s+criteria\b"
                              r"(?:[^.]{0,60}$|\s*:)", re.I)
# Older records list exclusions under a lead-in instead: "Patients with the following are excluded:".
_EXCLUDING_LEAD = re.compile(r"^[^:]{0,100}\b(?:exclu\w*|ineligible|not (?:be )?eligible)\b[^:.]{0,60}:\s*$", re.I)
_FIELD = re.compile(r"^([A-Z][A-Za-z ]{1,40}):(?: (.*))?$")
_FIELD_SECTION: dict[str, Section] = {
    "title": "title", "official title": "title", "acronym": "title", "conditions": "conditions",
    "abstract": "abstract", "brief summary": "summary", "eligibility criteria": "inclusion",
}
# Fields whose text runs on over the following lines: the rest of the document belongs to them.
_BLOCKS = {"abstract", "brief summary", "eligibility criteria"}


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    section: Section


def _normalize(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[\-*•]+\s", " ", text.lower())).strip()


def sections(document: str) -> tuple[str, list[Span]]:
    """The document normalized (lower case, one space, no bullets), and which section each stretch of it is."""
    spans: list[Span] = []
    parts: list[str] = []
    length = 0
    current: Section = "details"
    block: str | None = None
    for line in document.splitlines():
        field = _FIELD.match(line)
        label = field.group(1).lower() if field else None
        if block is None or (label in _BLOCKS and label != block):
            current = _FIELD_SECTION.get(label or "", "details")
            block = label if label in _BLOCKS else None
        elif block == "eligibility criteria" and (header := _CRITERIA_HEADER.match(line)):
            current = "inclusion" if header.group(1).lower() == "inclusion" else "exclusion"
        elif block == "eligibility criteria" and _EXCLUDING_LEAD.match(line):
            current = "exclusion"
        text = _normalize(line)
        if not text:
            continue
        spans.append(Span(length, length + len(text), current))
        parts.append(text)
        length += len(text) + 1
    return " ".join(parts), spans


def locate(quote: str, document: str) -> Section | None:
    """The section of `document` holding `quote` (or, for a quote elided with "…", its longest piece)."""
    return locate_all([quote], document)[0]


def locate_all(quotes: Sequence[str], document: str) -> list[Section | None]:
    """Each quote's section. A summary often repeats an eligibility line: a quote found in both is the
    criterion's (inclusion or exclusion), since that is what decides who may enrol."""
    text, spans = sections(document)
    found: list[Section | None] = []
    for quote in quotes:
        pieces = sorted((_normalize(p) for p in re.split(r"…|\.\.\.|\[\.\.\.\]", quote)), key=len, reverse=True)
        piece = pieces[0].strip(" .;:,\"'") if pieces else ""
        places: list[Section] = []
        at = text.find(piece) if len(piece) >= 3 else -1
        while at >= 0:
            places += [s.section for s in spans if s.start <= at < s.end + 1][:1]
            at = text.find(piece, at + 1)
        found.append(next((p for p in places if p in ("inclusion", "exclusion")), places[0] if places else None))
    return found


# Words that make a criterion hold for only part of what it names, chosen by reading demo and model verdicts on
# the offline corpus's eligibility lines (tests/ai_columns/test_evidence.py). An exception limits its whole
# sentence ("Brain metastases, unless treated and stable"); a modifier only the clause naming the criterion's
# topic, since a long line lists many conditions ("active hepatitis B or hepatitis C").
_EXCEPTION = re.compile(
    r"\b(?:unless|except(?:ion)?|excepting|provided(?: that)?|as long as|only if|"
    r"(?:may|can|will) be (?:eligible|included|allowed|permitted|enrolled)|"
    r"(?:is|are|be) (?:allowed|permitted|eligible|acceptable)|(?:allowed|permitted|eligible) if)\b", re.I)
_MODIFIER = re.compile(
    r"\b(?:(?:un)?treated|untreatable|(?:un|well[- ]|poorly |adequately )?controlled|(?:a)?symptomatic|"
    r"(?:in)?active|progressi(?:ve|ng)|(?:un)?stable|clinically (?:significant|stable|relevant)|"
    r"(?:within|in the|during the) (?:the )?(?:past |last |previous |prior )?\d+\s*(?:days?|weeks?|months?|years?)|"
    r"(?:at least|≥|>=|more than|less than|<|>)\s*\d+\s*(?:days?|weeks?|months?)|recent(?:ly)?)\b", re.I)
_SENTENCE = re.compile(r"[;.]\s|\s[a-z0-9]\)\s")
_CLAUSE = re.compile(r";|,\s|\.\s")  # not at "or": "active drug or alcohol abuse" is active alcohol abuse
_NOT_TOPIC = frozenset("""allow allows allowed accept accepts accepting permit permits permitted exclude
excludes excluded excluding exclusion include includes including inclusion require requires required requiring
enrol enroll enrolls enrols patient patients participant participants subject subjects people person with without
the any all trial study studies that this those for from into onto does doesn eligible eligibility criteria
who have has having criterion history prior known""".split())


_ABOUT_EXCLUSION = re.compile(r"\b(exclud\w*|exclusion|ineligib\w*|not (?:allowed|eligible|permitted)|prohibit\w*|"
                              r"rule[sd]? out|bar(?:s|red)?)\b", re.I)


def _topic(criterion: str) -> list[str]:
    words = re.findall(r"[a-z][a-z\-]+", criterion.lower())
    return [w[:5] for w in words if len(w) >= 3 and w not in _NOT_TOPIC]


def restriction(quote: str, criterion: str) -> str | None:
    """The words in `quote` that limit how far it bears on `criterion`'s topic, or None."""
    topic = _topic(criterion)

    def on_topic(parts: list[str]) -> list[str]:
        return [p for p in parts if any(w[:5] in topic for w in re.findall(r"[a-z][a-z\-]+", p.lower()))] or [quote]

    for sentence in on_topic(_SENTENCE.split(quote)):
        if exception := _EXCEPTION.search(sentence):
            return exception.group(0)
    for clause in on_topic(_CLAUSE.split(quote)):
        if modifier := _MODIFIER.search(clause):
            return modifier.group(0)
    return None


def qualify(criterion: str, value: str | None, evidence: Sequence[str],
            found: Sequence[Section | None]) -> Qualifier | None:
    """`conditional`, `needs_review` or None for a boolean verdict `value` (MET / NOT_MET / UNKNOWN)."""
    if value not in ("MET", "NOT_MET"):
        return None
    located = [(quote, section) for quote, section in zip(evidence, found, strict=True) if section is not None]
    if not located and (evidence or value == "MET"):
        return "needs_review"  # quotes the record does not hold, or a Yes with nothing to show for it
    if any(restriction(quote, criterion) for quote, section in located if section in ("inclusion", "exclusion")):
        return "conditional"
    if value == "MET":
        about_exclusion = bool(_ABOUT_EXCLUSION.search(criterion))
        against = "inclusion" if about_exclusion else "exclusion"
        if all(section == against for _, section in located):
            return "needs_review"
    return None


SECTION_LABEL: dict[str, str] = {"inclusion": "Inclusion", "exclusion": "Exclusion", "title": "Title",
                                 "abstract": "Abstract", "summary": "Summary", "conditions": "Conditions",
                                 "details": "Record details"}


def labelled(quote: str, section: str | None) -> str:
    """A quote as exports show it: "[Exclusion] …", or "[not found in the record] …"."""
    return f"[{SECTION_LABEL.get(section or '', 'not found in the record')}] {quote}"
