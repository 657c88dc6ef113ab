"""Split a ClinicalTrials.gov eligibility text into single inclusion and exclusion criteria.

CT.gov stores eligibility as loosely formatted markdown. What the parser reads:

- section headings ("Inclusion Criteria:", "Key exclusion criteria", "EXCLUSION CRITERIA", "Patients with
  the following are excluded:", "You will not be eligible if you:") switch the kind; text before any
  heading is inclusion. The old NCI layout ("DISEASE CHARACTERISTICS:", "PRIOR CONCURRENT THERAPY:") is
  inclusion, with its "Excluded:"-style subsections exclusion;
- short topic lines ending in a colon ("Hepatic:", "Age:", "Renal") label the items below them: each
  item becomes "Hepatic: bilirubin < 1.5 mg/dL" so it reads alone;
- bullets ("-", "*", "•", "1.", "1)", "a.", "(a)", "i)") start an item; a line without a bullet that
  follows an item continues it (a wrapped line or a trailing paragraph), unless a blank line came before
  it and it starts a new sentence with a capital letter, when it is an item of its own;
- nested bullets under an item ending in a colon ("any of the following:") become items of their own
  prefixed with that item, which is dropped; under any other item they are items of their own.

Markdown escapes and HTML entities are undone; empty items ("-", "N/A", "None") are dropped.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from backend.screening.models import Criterion, CriterionKind

_BULLET = re.compile(r"^(?:[-*•+·▪◦o](?=\s)|\(?\d{1,2}[.)](?!\d)|\(?[a-zA-Z][.)](?=\s)|\(?(?:i|ii|iii|iv|v|vi|vii|viii|"
                     r"ix|x)[.)](?=\s))\s*")
# "Key inclusion criteria", "Additional exclusion criteria": the qualifier a heading may carry.
_QUALIFIED = r"^(?:(?:key|main|major|general|specific|additional|other)\s+)?"
_EXCLUSION_HEADING = re.compile(
    _QUALIFIED + r"(?:exclusion|non[- ]?inclusion)"
    r"(?:\s+criteri(?:a|on))?\b|\bexcluded\b|\bnot\s+(?:be\s+)?eligible\b|\bineligible\b|\bmay not\s+(?:participate|"
    r"enrol)|\bcannot\s+(?:participate|be included)|\bnot\s+(?:be\s+)?(?:included|enrolled|allowed)\b|"
    r"\bnot\s+permitted\b|^contraindications?\b", re.I)
_INCLUSION_HEADING = re.compile(
    _QUALIFIED + r"inclusion(?:\s+criteri(?:a|on))?\b|"
    r"\beligib|^(?:disease|patient|subject)\s+characteristics|^prior\s*/?\s*(?:and\s+)?concurrent\s+therapy|"
    r"\bmust\s+(?:have|meet|be)\b|\bentry\s+criteria|^required\b|^allowed\b|\binclude[ds]?\b|^criteria\b|"
    r"^selection\s+criteria|^all\s+(?:patients|participants|subjects)", re.I)
_INLINE_HEADING = re.compile(r"^\W*(?:key\s+)?(inclusion|exclusion)\s+criteria\b[^:]{0,40}:\s*(\S.{10,})$", re.I)
_PLAIN_HEADING = re.compile(_QUALIFIED + r"(?:inclusion|exclusion|non[- ]?inclusion|eligibility)"
                                          r"(?:\s+criteri(?:a|on))?\W*$", re.I)
_TOPIC = re.compile(r"^[A-Za-z][A-Za-z /&,()'-]{1,40}$")  # "Hepatic", "Prior concurrent therapy", "Age"
_EMPTY = re.compile(r"^(?:n/?a|none|not applicable|no eligibility criteria|please contact site for information)"
                    r"\.?$", re.I)
_ENTITY_ESCAPE = re.compile(r"\\([<>&*_\[\]()#+\-.!|`~=])")


def _clean(text: str) -> str:
    text = _ENTITY_ESCAPE.sub(r"\1", text)
    text = html.unescape(html.unescape(text))
    return " ".join(text.replace("\u00a0", " ").split())


@dataclass
class _Item:
    kind: CriterionKind
    indent: int
    text: str
    topic: str | None
    parent: _Item | None = None
    children: list[_Item] = field(default_factory=list)


def _heading(line: str) -> tuple[CriterionKind | None, bool]:
    """(kind it switches to or None, is it a heading at all)."""
    text = line.strip().strip("-*#_ ").strip()
    text = re.sub(r"^[-\s]*|[-\s]*$", "", text)
    bare = text.rstrip(":").strip()
    if not bare or len(bare) > 90:
        return None, False
    ends_colon = text.endswith(":")
    looks_heading = ends_colon or bool(re.search(r"\bcriteri(?:a|on)\b", bare, re.I)) or bare.isupper()
    if not looks_heading:
        return None, False
    if re.search(r"\bcriteri(?:a|on)\b|^\W*(?:key|main)\b", bare, re.I) or bare.isupper() or ends_colon:
        if _EXCLUSION_HEADING.search(bare):
            return "exclusion", True
        if _INCLUSION_HEADING.search(bare):
            return "inclusion", True
    return None, False


def _topic(line: str) -> str | None:
    """A short label line ("Hepatic:", "Age:", "Renal") that heads the items below it."""
    text = line.strip().strip("-*#_ ").strip()
    bare = text.rstrip(":").strip()
    if not bare or not _TOPIC.match(bare) or len(bare.split()) > 5:
        return None
    if text.endswith(":") or bare.isupper() or line.strip().startswith("--"):
        return bare.capitalize() if bare.isupper() else bare
    return None


def parse_criteria(text: str | None) -> list[Criterion]:
    """Single criteria in text order, each kind indexed from 0."""
    if not text or not text.strip():
        return []
    kind: CriterionKind = "inclusion"
    topic: str | None = None
    roots: list[_Item] = []
    stack: list[_Item] = []  # open items, outermost first
    for raw in text.replace("\r\n", "\n").replace("\t", "    ").split("\n"):
        if not raw.strip():
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        stripped = raw.strip()
        bullet = _BULLET.match(stripped)
        body = stripped[bullet.end():].strip() if bullet else stripped
        inline = _INLINE_HEADING.match(body)
        if inline:  # "Exclusion criteria include the following: advanced visual field loss; …"
            kind = "exclusion" if inline.group(1).lower().startswith("ex") else "inclusion"
            topic, stack = None, []
            body = inline.group(2).strip()
        switched, is_heading = _heading(body)
        if bullet and not re.search(r"criteri", body, re.I):
            is_heading = False  # "- Allowed as prophylaxis for PCP:" is an item's lead-in
        if is_heading:
            kind = switched or kind
            bare = body.strip().strip("-*#_: ").strip()
            # "Excluded within 30 days of study entry:" labels its items; "Exclusion Criteria" does not
            topic = None if _PLAIN_HEADING.match(bare) else _clean(bare)
            stack = []
            continue
        label = None if bullet else _topic(body)
        if label is not None:  # a bulleted line ending in a colon is an item's lead-in instead (below)
            topic, stack = label, []
            continue
        if not bullet and stack:
            last = stack[-1]
            continuation = indent > last.indent or not re.match(r"^[A-Z(\"'\d]", body)
            if continuation:
                last.text = f"{last.text} {body}"
                continue
        item = _Item(kind=kind, indent=indent, text=body, topic=topic)
        while stack and stack[-1].indent >= indent:
            stack.pop()
        if stack and bullet:
            item.parent = stack[-1]
            stack[-1].children.append(item)
        else:
            roots.append(item)
            stack = []
        stack.append(item)
    return _flatten(roots)


def _flatten(roots: list[_Item]) -> list[Criterion]:
    out: list[Criterion] = []
    counts = {"inclusion": 0, "exclusion": 0}

    def emit(item: _Item, prefix: str) -> None:
        text = _clean(item.text)
        lead_in = text.endswith(":")
        if item.children and lead_in:
            for child in item.children:
                emit(child, f"{prefix}{text} ")
            return
        full = _clean(f"{prefix}{text}")
        if re.search(r"[A-Za-z]{2}", text) and not _EMPTY.match(text):
            if item.topic and not full.lower().startswith(item.topic.lower()):
                full = f"{item.topic}: {full}"
            out.append(Criterion(kind=item.kind, index=counts[item.kind], text=full))
            counts[item.kind] += 1
        for child in item.children:
            emit(child, prefix)

    for root in roots:
        emit(root, "")
    return out


_REGISTERED_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(year|month|week|day)s?\s*$", re.I)


def _age_phrase(value: str | None) -> str | None:
    """'18 Years' → '18 years'; None for no limit or a value we cannot read."""
    m = _REGISTERED_AGE.match(value or "")
    return f"{m.group(1)} {m.group(2).lower()}s" if m else None


def registered_criteria(minimum_age: str | None, maximum_age: str | None, sex: str | None,
                        after: list[Criterion]) -> list[Criterion]:
    """The age and sex limits CT.gov records as structured fields (often absent from the text) as inclusion
    criteria, numbered after the text's own."""
    low, high = _age_phrase(minimum_age), _age_phrase(maximum_age)
    texts: list[str] = []
    if low and high:
        texts.append(f"Age {low} to {high} (registered age limits)")
    elif low:
        texts.append(f"Age {low} or older (registered minimum age)")
    elif high:
        texts.append(f"Age {high} or younger (registered maximum age)")
    if sex in ("FEMALE", "MALE"):
        texts.append(f"{sex.capitalize()} (registered sex)")
    start = sum(c.kind == "inclusion" for c in after)
    return [Criterion(kind="inclusion", index=start + i, text=t) for i, t in enumerate(texts)]
