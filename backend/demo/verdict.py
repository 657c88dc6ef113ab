"""The demo model's answers to evaluator requests: deterministic, honest heuristics, no model at all.

The built-in demo model (a local fake of the Messages API) answers requests whose system prompt starts
with `backend.criteria.prompts.CRITERION_TAG` / `TEXT_TAG` by calling `demo_reply_text(system, user_message)`,
which returns the JSON text the evaluator expects. The heuristics decide only what they can read off
the document: the patient's age against an age criterion, the patient's sex, and explicit mentions or
negations ("no history of X", "denies X") of a short criterion's key words. Everything else is
"unknown". There is no randomness and no guessing: when a heuristic cannot tell, the answer is unknown.
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

from backend.criteria.prompts import Answer, parse_request
from backend.demo.ages import age_bounds as _age_bounds
from backend.demo.extraction import extract
from backend.demo.record_text import parse_record
from backend.demo.records import decide
from backend.screening.note_reader import strip_suffix


class Assessment(NamedTuple):
    answer: Answer  # is the criterion true of the patient / document?
    reasoning: str
    evidence: list[str]


class DemoTextAnswer(NamedTuple):
    answer: str | None
    reasoning: str
    evidence: list[str]


# ---- the document -----------------------------------------------------------------------------------

def split_sentences(document: str) -> list[str]:
    """Numbered notes keep one sentence per line ("3. She …"); other text is split at sentence ends."""
    out: list[str] = []
    for line in document.splitlines():
        if re.match(r"^\s*\d+\.\s", line):
            out.append(line.strip())
        else:
            out.extend(s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9])", line) if s.strip())
    return out


_AGE_PATTERNS = (
    (re.compile(r"\b(\d{1,3})\s*(?:-|\s)?\s*(?:year|yr)s?(?:\s*-\s*|\s+)old\b", re.I), 1.0),
    (re.compile(r"\b(\d{1,3})\s*(?:-\s*)?(?:yo|y/o|y\.o\.)(?=\W|$)", re.I), 1.0),
    (re.compile(r"\baged?\s+(?:of\s+)?(\d{1,3})\b", re.I), 1.0),
    (re.compile(r"\b(\d{1,2})\s*(?:-|\s)?\s*months?(?:\s*-\s*|\s+)old\b", re.I), 1 / 12),
    (re.compile(r"\b(\d{1,2})\s*(?:-|\s)?\s*(?:weeks?|days?)(?:\s*-\s*|\s+)old\b", re.I), 0.0),
)


def patient_age(sentences: list[str]) -> tuple[float, str] | None:
    for sentence in sentences:
        for pattern, scale in _AGE_PATTERNS:
            m = pattern.search(sentence)
            if m:
                return int(m.group(1)) * scale, sentence
    return None


_FEMALE = re.compile(r"\b(woman|female|girl|lady|she|her|mother)\b", re.I)
_MALE = re.compile(r"\b(man|male|boy|gentleman|he|his|him|father)\b", re.I)
_FEMALE_NOUN = re.compile(r"\b(woman|female|girl|lady)\b", re.I)
_MALE_NOUN = re.compile(r"\b(man|male|boy|gentleman)\b", re.I)


def patient_sex(sentences: list[str]) -> tuple[str, str] | None:
    """'female' or 'male' from the first sentence naming it (nouns first, then pronouns)."""
    for female, male in ((_FEMALE_NOUN, _MALE_NOUN), (_FEMALE, _MALE)):
        for sentence in sentences:
            f, m = bool(female.search(sentence)), bool(male.search(sentence))
            if f != m:
                return ("female" if f else "male"), sentence
    return None


# ---- words ------------------------------------------------------------------------------------------

GENERIC_WORDS = frozenset("""
a an the of in on at to for with and or by from as is are be been being has have had any all other
patient patients subject subjects participant participants individual individuals people person persons
history known prior previous previously documented diagnosis diagnosed diagnostic
evidence presence present clinical clinically confirmed established who which that this
these those must should will would able willing capable ability can may signed sign written give giving
provide providing obtain obtained study trial protocol's its their his her be subject's disease disorder
condition conditions
""".split())

_NEGATION = re.compile(r"\b(no|not|denies|denied|denying|without|negative|free of|absence of|absent|never|"
                       r"ruled out|rules out|nor)\b", re.I)
_CRITERION_NEGATION = re.compile(r"^\s*(no|not|without|absence of|free of|never|unable to|inability to|"
                                 r"not able to|unwilling to|lack of)\b\s*", re.I)
_CLAUSE_BREAK = re.compile(r";|\bbut\b|\bhowever\b|\balthough\b|\bthough\b|\bexcept\b|\bwhereas\b", re.I)
_RELATIVE = re.compile(r"\b(?:family history|mother|father|sister|brother|sibling|parent|son|daughter|aunt|"
                       r"uncle|grand\w*|cousin|wife|husband|relative)s?\b", re.I)
_SUFFIXES = ("ations", "ation", "ncy", "ers", "ing", "ive", "ion", "ics", "ies", "ic", "er", "ed", "es",
             "nt", "al", "s", "y")


def stem(word: str) -> str:
    return strip_suffix(word, _SUFFIXES)


_GENERIC_STEMS = frozenset(stem(w) for w in GENERIC_WORDS)


def content_stems(text: str) -> list[str]:
    words = re.findall(r"[a-z][a-z'\-]*", text.lower())
    stems = (stem(w) for w in words if len(w) >= 3 and w not in GENERIC_WORDS)
    return [s for s in stems if s not in _GENERIC_STEMS]


def _mention(stems: list[str], sentences: list[str]) -> tuple[str, str] | None:
    """('present'|'absent', sentence) for the first sentence clause naming all stems, else None."""
    for sentence in sentences:
        for clause in _CLAUSE_BREAK.split(sentence):
            words = re.findall(r"[a-z][a-z'\-]*", clause.lower())
            positions = [next((i for i, w in enumerate(words) if stem(w) == s), None) for s in stems]
            if None in positions:
                continue
            first = min(p for p in positions if p is not None)
            before = " ".join(words[:first])
            if _RELATIVE.search(before):
                continue  # a relative's condition says nothing about the patient
            return ("absent" if _NEGATION.search(before) else "present"), sentence
    return None


# ---- criteria ---------------------------------------------------------------------------------------

_AGE_WORDS = frozenset({"age", "aged", "ages", "year", "years", "yrs", "old", "older", "younger", "over",
                        "under", "above", "below", "least", "between", "inclusive", "greater", "less",
                        "than", "equal", "male", "female", "males", "females", "men", "women", "both",
                        "sexes", "genders", "gender", "adult", "adults", "minimum", "maximum", "time",
                        "enrollment", "screening", "consent", "informed", "child", "children",
                        "pediatric", "paediatric"})


def _assess_age(criterion: str, sentences: list[str]) -> Assessment | None:
    bounds = _age_bounds(criterion)
    if bounds is None:
        return None
    low, high, low_strict, high_strict = bounds
    extra = [w for w in re.findall(r"[a-z]+", criterion.lower())
             if w not in _AGE_WORDS and w not in GENERIC_WORDS]
    found = patient_age(sentences)
    if found is None:
        return Assessment("unknown", "The criterion sets an age limit but the note gives no age.", [])
    age, sentence = found
    edge = (low_strict and age == low) or (high_strict and age == high)
    inside = (low is None or age > low or (age == low and not low_strict)) and (
        high is None or age < high or (age == high and not high_strict))
    if edge:
        return Assessment("unknown", f"The patient is {age:g}, exactly on the criterion's strict bound.",
                          [sentence])
    span = f"{'' if low is None else f'from {low:g} '}{'' if high is None else f'up to {high:g}'}".strip()
    if not inside and " or " not in f" {criterion.lower()} ":
        return Assessment("no", f"The note gives the patient's age as {age:g}, outside the required age "
                                f"({span}).", [sentence])
    if inside and not extra:
        return Assessment("yes", f"The note gives the patient's age as {age:g}, within the required age "
                                 f"({span}).", [sentence])
    return None  # the age fits but the criterion asks for more: the other heuristics decide


_SEX_ONLY = re.compile(r"^[\s\W]*(?:(?:male|female|men|women|man|woman|both|sexes|genders?|and|or|patients?|"
                       r"subjects?|of|either|sex|all)[\s\W]*)+$", re.I)
_FEMALE_TOPIC = re.compile(r"\b(pregnan\w*|lactat\w*|breast[- ]?feed\w*|childbearing|menopaus\w*|"
                           r"menstrua\w*|contracepti\w*)", re.I)


def _assess_sex(criterion: str, sentences: list[str]) -> Assessment | None:
    sex = patient_sex(sentences)
    lowered = criterion.lower()
    if _FEMALE_TOPIC.search(lowered) and sex and sex[0] == "male":
        return Assessment("not_applicable", "The criterion concerns women (pregnancy, lactation or "
                                            "childbearing) and the patient is male.", [sex[1]])
    if not _SEX_ONLY.match(criterion):
        return None
    wants_female = bool(re.search(r"\b(female|women|woman)\b", lowered))
    wants_male = bool(re.search(r"\b(male|men|man)\b", lowered))
    if sex is None:
        return Assessment("unknown", "The criterion concerns sex but the note does not state it.", [])
    if wants_female and wants_male or not (wants_female or wants_male):
        return Assessment("yes", f"The criterion admits either sex; the patient is {sex[0]}.", [sex[1]])
    ok = (sex[0] == "female") == wants_female
    wanted = "female" if wants_female else "male"
    return Assessment("yes" if ok else "no", f"The criterion requires a {wanted} patient; the note "
                                             f"describes a {sex[0]} patient.", [sex[1]])


def _assess_mentions(criterion: str, sentences: list[str]) -> Assessment:
    text = criterion.strip().rstrip(".").strip()
    negated = bool(_CRITERION_NEGATION.match(text))
    text = _CRITERION_NEGATION.sub("", text) if negated else text
    if re.search(r"\d|[<>≤≥=%]", text):
        return Assessment("unknown", "The criterion needs a measurement or a date the demo model cannot "
                                     "read reliably.", [])
    alternatives = [content_stems(part) for part in re.split(r"\bor\b|/", text, flags=re.I)]
    alternatives = [a for a in alternatives if a]
    limit = 4 if len(alternatives) == 1 else 2  # "or" inside a longer phrase is not a list of options
    if not alternatives or any(len(a) > limit for a in alternatives) or len(alternatives) > 4:
        return Assessment("unknown", "The criterion is too complex for the demo model's keyword check.", [])
    found = [_mention(a, sentences) for a in alternatives]
    present = [hit[1] for hit in found if hit and hit[0] == "present"]
    absent = [hit[1] for hit in found if hit and hit[0] == "absent"]
    if present:
        answer: Answer = "no" if negated else "yes"
        return Assessment(answer, f"The note mentions {'what the criterion rules out' if negated else 'it'} "
                                  "without negation.", present[:2])
    if len(absent) == len(alternatives):
        answer = "yes" if negated else "no"
        return Assessment(answer, "The note explicitly negates it.", absent[:2])
    return Assessment("unknown", "The note does not mention what the criterion asks about.", [])


def assess_criterion(criterion: str, document: str) -> Assessment:
    """Is `criterion` true of the patient (or document)? yes / no / unknown / not_applicable."""
    sentences = split_sentences(document)
    if not criterion.strip() or not sentences:
        return Assessment("unknown", "There is no criterion or no document to check.", [])
    return (_assess_age(criterion, sentences) or _assess_sex(criterion, sentences)
            or _assess_mentions(criterion, sentences))


def demo_text_answer(question: str, document: str) -> DemoTextAnswer:
    """The document sentence sharing the most key words with the question, or None when none does."""
    sentences = split_sentences(document)
    if re.search(r"\bhow old\b|\bage\b", question, re.I) and (found := patient_age(sentences)):
        return DemoTextAnswer(f"{found[0]:g} years", "The document states the age.", [found[1]])
    wanted = set(content_stems(question))
    scored = [(len(wanted & set(content_stems(s))), -i, s) for i, s in enumerate(sentences)]
    best = max(scored, default=(0, 0, ""))
    if not wanted or best[0] == 0:
        return DemoTextAnswer(None, "The document does not mention what the question asks about.", [])
    answer = re.sub(r"^\s*\d+\.\s+", "", best[2])
    return DemoTextAnswer(answer[:300], f"The sentence sharing most key words with the question "
                                        f"({best[0]} of {len(wanted)}).", [best[2]])


def demo_reply_text(system: str, user_message: str) -> str | None:
    """The demo model's reply text for an evaluator request, or None when it is not one."""
    request = parse_request(system, user_message)
    if request is None:
        return None
    record = parse_record(request.document)
    if record is not None:  # an AI column over an article or a trial: its fields decide
        if request.kind == "criterion":
            d = decide(request.text, record)
            return json.dumps({"answer": d.answer, "reasoning": d.reasoning, "evidence": d.evidence})
        found = extract(request.text, record)
        if found is not None:
            return json.dumps({"answer": found.answer, "reasoning": found.reasoning, "evidence": found.evidence})
    if request.kind == "criterion":
        a = assess_criterion(request.text, request.document)
        return json.dumps({"answer": a.answer, "reasoning": a.reasoning, "evidence": a.evidence})
    t = demo_text_answer(request.text, request.document)
    return json.dumps({"answer": t.answer, "reasoning": t.reasoning, "evidence": t.evidence})
