"""Search cards of the demo model: a TrialScout form or a PubMed query, new or built on the page's own.

A request that names only filters ("narrow to phase 3", "only ones in France") refines the search the page
shows; "broaden", "remove the phase filter" or "include completed too" loosen it; after an accepted search
found nothing, the next turn says so and proposes what to relax. Fields come from `vocabulary` (phases,
statuses, sex, ages, sponsors, places, drug classes); words it does not know pass through as free text.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

from backend.demo.brain import DemoRequest, intent, marker_json
from backend.demo.general import page_suggestions
from backend.demo.page_state import PageState, read
from backend.demo.vocabulary import (
    STOPWORDS,
    Concept,
    ages_in,
    concepts_in,
    consume,
    leftover_terms,
    location_in,
    phases_in,
    sex_in,
    sponsor_in,
    statuses_in,
    without_scaffolding,
)
from backend.demo.wire import Reply

FIND = re.compile(r"\b(find|search|show|look(ing)? for|get|list|want|need|build|write|suggest|any|which|what)\b", re.I)
BROADEN = re.compile(r"\b(broaden|broader|widen|wider|expand|loosen|relax|too (?:few|narrow|restrictive|strict)|"
                     r"more results|less (?:strict|restrictive)|fewer filters)\b", re.I)
DROP = re.compile(r"\b(?:remove|drop|clear|without|no longer|get rid of|lose|ignore)\b(?: the| my| any)?\s+([\w\- ]+?)"
                  r"(?:\s+(?:filter|restriction|limit|criterion|clause|part|term))?\s*(?:[.!?]|$| from| and)", re.I)
ASKS_ARTICLES = re.compile(r"\b(find|search|show|look(?:ing)? for|get|list|want|need|build|write|suggest|pull up)\b",
                           re.I)
ADDITIVE = re.compile(r"\b(too|as well|also|include|including|plus|in addition)\b", re.I)
REFINE = re.compile(r"\b(narrow|only|just|restrict|limit|filter|same search|current search|this search|refine|"
                    r"focus|those|these|ones|instead|add|specific|improve|better|tighten)\b", re.I)
STUDY_WORDS = re.compile(r"\b(trials?|studies|study)\b", re.I)
ARTICLE_WORDS = re.compile(r"\b(articles?|papers?|literature|publications?|query|pubmed|reviews?|evidence)\b", re.I)
FILLER = set("""sponsored funded testing evaluating using involving over under older younger than between years
year old aged age women woman men man female male people patients participants adults still have has been that
who where there are is by were phase phases late early inhibitor inhibitors drug drugs therapy treatment
treatments narrow down restrict limit filter include including same but those ones run led i'm im yes please
them they their from last next into per each every able ok okay hmm currently open active ongoing within near
at let's lets could should why how now no not nothing came come up results result table empty compare first
second two three four five tell explain give show more less few what next done happened happen see seeing got
find found search searched appear appears specific focused related""".split())
DRUG_SUFFIX = re.compile(r"^[a-z][a-z\-]*(mab|nib|tinib|lib|parib|glutide|gliflozin|statin|formin|platin|taxel|"
                         r"cycline|azole|pril|sartan|olol|vir|mycin|cillin|rubicin|trexate|tide|cept|leucel)$")
# A treatment named in one word ("radiotherapy", "mastectomy", "surgery"): beside a named condition, the
# intervention searched for rather than part of the condition.
TREATMENT = re.compile(r"^(?:[a-z\-]+(?:therapy|therapies|surgery|ectomy|otomy|ostomy|plasty|transplant\w*)|surgery|"
                       r"radiation|radiosurgery|vaccines?|vaccination|transplant\w*|ablation|stimulation|exercise|"
                       r"acupuncture|rehabilitation|counsel+ing)$")
DISEASE_WORD = re.compile(r"metasta|cancer|carcinoma|tumou?r|neoplasm|disease|syndrome|disorder|infection|lymphoma|"
                          r"leuk|sarcoma|myeloma|fibrosis")
PUBLICATION_TYPES = (
    (r"\brandomi[sz]ed(?: controlled)?(?: clinical)?(?: trials?| studies)?|\brcts?\b",
     '"Randomized Controlled Trial"[pt]'),
    (r"\bmeta-?analys", '"Meta-Analysis"[pt]'),
    (r"\bsystematic reviews?", '"Systematic Review"[pt]'),
    (r"\breviews?\b", "Review[pt]"),
    (r"\bcase reports?", '"Case Reports"[pt]'),
    (r"\bclinical trials?\b", '"Clinical Trial"[pt]'),
    (r"\bguidelines?\b", "Guideline[pt]"),
)


# -- reading a request ----------------------------------------------------------------------------------

def trial_fields(text: str) -> dict[str, Any]:
    """The TrialScout form fields a request names (only those it names)."""
    concepts = [c for c in concepts_in(text) if c.kind in ("condition", "intervention", "topic")]
    fields: dict[str, Any] = {}
    conditions = [named_condition(text, c) for c in concepts if c.kind == "condition"]
    interventions = [c.label for c in concepts if c.kind == "intervention"]
    # A topic that is a disease ("brain metastases") is the condition when nothing else names one.
    diseases = [c.label for c in concepts if c.kind == "topic" and DISEASE_WORD.search(c.label)]
    words = [w for w in leftover_terms(without_scaffolding(text), concepts_in(text)) if w not in FILLER]
    interventions += [w for w in words if DRUG_SUFFIX.match(w) or (conditions or diseases) and TREATMENT.match(w)]
    rest = [w for w in words if w not in interventions]
    if not conditions and not rest:
        conditions = diseases
    if conditions:
        fields["condition"] = " OR ".join(conditions)
    elif rest:
        fields["condition"] = " ".join(rest[:5])
    if interventions:
        fields["intervention"] = " OR ".join(dict.fromkeys(interventions))
    if phases := phases_in(text):
        fields["phase"] = phases
    if statuses := statuses_in(text):
        fields["status"] = statuses
    if sex := sex_in(text):
        fields["sex"] = sex
    low, high = ages_in(text)
    if low is not None:
        fields["min_age"] = low
    if high is not None:
        fields["max_age"] = high
    if sponsor := sponsor_in(text):
        fields["sponsor"] = sponsor
    if place := location_in(text):
        fields["location"] = place
    return fields


QUALIFIER = re.compile(r"([A-Za-z0-9]+(?:-[A-Za-z0-9]+)+|[A-Z0-9]{2,}[+-]?)\s+$")


def named_condition(text: str, concept: Concept) -> str:
    """The condition as the user named it: "triple-negative breast cancer" stays that, not "breast cancer";
    "Alzheimer's" stays Alzheimer's, not the broader "dementia". An abbreviation ("NSCLC") and the concept's
    own name give the concept's label."""
    for pattern in concept.patterns:
        if match := re.search(pattern + r"[\w'’-]*", text, re.I):
            break
    else:
        return concept.label
    start, said = match.start(), match.group(0)
    while qualifier := QUALIFIER.search(text[:start]):  # hyphenated or coded qualifiers just before it
        start = qualifier.start()
    named = text[start:match.end()].strip()
    if start < match.start():
        return named
    if concept.label.lower() in said.lower() or (said.isupper() and len(said) <= 6) or \
            said.lower().rstrip("s") in concept.label.lower():
        return concept.label
    return named


def _named_field(phrase: str) -> list[str]:
    """Form fields a "remove the … filter" phrase names."""
    lowered = phrase.lower()
    table = (("phase", ["phase"]), ("status", ["status"]), ("recruit", ["status"]), ("sex", ["sex"]),
             ("gender", ["sex"]), ("women", ["sex"]), ("age", ["min_age", "max_age"]), ("location", ["location"]),
             ("country", ["location"]), ("place", ["location"]), ("sponsor", ["sponsor"]),
             ("intervention", ["intervention"]), ("drug", ["intervention"]), ("keyword", ["eligibility_keywords"]),
             ("condition", ["condition"]))
    return [f for word, fs in table if word in lowered for f in fs]


def _explain(fields: dict[str, Any]) -> str:
    parts = []
    for key, value in fields.items():
        if key == "explanation" or value in (None, "", []):
            continue
        shown = " / ".join(value) if isinstance(value, list) else value
        parts.append(f"{key.replace('_', ' ')}: {shown}")
    return "; ".join(parts) or "no filters"


def _trial_card(fields: dict[str, Any], lead: str, req: DemoRequest, why: str) -> Reply:
    card = {k: v for k, v in fields.items() if v not in (None, "", [])}
    card["explanation"] = f"{why} ({_explain(card)})."
    return Reply.text(f"{lead}\n\n" + marker_json("TRIAL_SEARCH:", card) + page_suggestions(req))


def _zero_note(state: PageState) -> str:
    zero = state.zero_results()
    if not zero:
        return ""
    what = zero.get("query") or "the current search"
    note = f"The search you accepted ({what}) found 0 {state.noun}."
    if zero.get("previous_query") and zero.get("previous_result_count"):
        note += (f" Before it, {zero['previous_query']} found {zero['previous_result_count']:,}, so one of the "
                 "added restrictions is what emptied the table.")
    return note


# -- TrialScout ---------------------------------------------------------------------------------------

@intent(priority=300)
def trial_search_card(req: DemoRequest) -> Reply | None:
    if not req.offers_marker("TRIAL_SEARCH:"):
        return None
    text = req.user_text
    state = read(req.page, req.page_context)
    current = {k: v for k, v in state.search.items() if v not in (None, "", [], "ALL")}
    asked = trial_fields(text)
    if current and asked.get("condition") and not concepts_in(text) and not re.search(
            r"\b(?:for|condition|disease|switch to)\b", text, re.I):
        del asked["condition"]  # on a page with a search, stray words are not a new condition
    zero = _zero_note(state)
    dropped = [f for m in DROP.finditer(text) for f in _named_field(m.group(1))]
    if current and (BROADEN.search(text) or dropped or (zero and not asked)):
        return _trial_broaden(req, current, asked, dropped, zero)
    if current and asked and (REFINE.search(text) or ADDITIVE.search(text) or "condition" not in asked
                              or not STUDY_WORDS.search(text)):
        fields = dict(current)
        if "status" in asked and ADDITIVE.search(text):
            asked["status"] = list(dict.fromkeys([*current.get("status", []), *asked["status"]]))
        fields.update(asked)
        lead = (zero + " " if zero else "") + "Here's your current search with that change; Accept runs it."
        return _trial_card(fields, lead.strip(), req, "Builds on the current search")
    if not asked or not (FIND.search(text) or STUDY_WORDS.search(text)):
        return None
    if "condition" not in asked and "intervention" not in asked and "sponsor" not in asked:
        return None  # only filters and nothing on the page to apply them to: not enough for an honest form
    if "status" not in asked:
        asked["status"] = ["RECRUITING", "ACTIVE_NOT_RECRUITING"]
    lead = (zero + " " if zero else "") + "Here's a trial search for that; Accept fills the form and runs it."
    return _trial_card(asked, lead.strip(), req, "Trials matching")


def _trial_broaden(req: DemoRequest, current: dict[str, Any], asked: dict[str, Any], dropped: list[str],
                   zero: str) -> Reply:
    fields = dict(current)
    additive_status = "status" in asked and ADDITIVE.search(req.user_text)
    if dropped:
        removed = [f for f in dropped if f in fields]
    elif additive_status:
        removed = []
    else:
        filters = ("location", "eligibility_keywords", "sex", "min_age", "max_age", "status", "phase", "sponsor")
        removed = [f for f in filters if f in fields] or [f for f in ("intervention",) if f in fields]
    for key in removed:
        fields.pop(key, None)
    if additive_status:
        fields["status"] = list(dict.fromkeys([*current.get("status", []), *asked["status"]]))
    change = (f"without the {', '.join(k.replace('_', ' ') for k in removed)} "
              f"restriction{'s' if len(removed) > 1 else ''}" if removed else "with the wider status")
    lead = (f"{zero} " if zero else "") + f"Here's a broader search: the same, {change}. Accept runs it."
    return _trial_card(fields, lead, req, "A broader version of the current search")


# -- Tablizer -----------------------------------------------------------------------------------------

def split_and(query: str) -> list[str]:
    """The top-level AND clauses of a PubMed query (parentheses and quotes respected)."""
    clauses, depth, quoted, start = [], 0, False, 0
    i = 0
    while i < len(query):
        ch = query[i]
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch == "(":
            depth += 1
        elif not quoted and ch == ")":
            depth -= 1
        elif not quoted and depth == 0 and query[i:i + 5] == " AND ":
            clauses.append(query[start:i].strip())
            start = i + 5
            i += 4
        i += 1
    clauses.append(query[start:].strip())
    return [c for c in clauses if c]


def _grouped(clause: str) -> str:
    return f"({clause})" if " OR " in clause and not (clause.startswith("(") and clause.endswith(")")) else clause


DISEASE_PHRASE = re.compile(r"(?:[a-z0-9][a-z0-9-]*\s+){1,4}(?:lymphomas?|leuka?emias?|carcinomas?|sarcomas?|myelomas?|"
                            r"diseases?|syndromes?|fibrosis|disorders?|infections?|tumou?rs?|neoplasms?)\b")


ARTICLE_NOUNS = {"papers", "paper", "articles", "article", "studies", "study", "trials", "literature", "research"}


def _consume_for_phrase(text: str, concepts: list[Concept]) -> tuple[list[Concept], str]:
    found, rest = consume(text, tuple(concepts))
    return found, " ".join(rest.split())


def query_clauses(text: str) -> list[str]:
    """PubMed clauses for what a request names: MeSH + synonyms, free-text words, publication types."""
    lowered = without_scaffolding(text).lower()
    types = []
    for pattern, clause in PUBLICATION_TYPES:
        if re.search(pattern, lowered):
            types.append(clause)
            lowered = re.sub(pattern + r"\w*", " ", lowered)
            if "Review" in clause:
                break
    concepts = concepts_in(lowered)
    clauses = [c.pubmed for c in concepts]
    # A disease named in several words the vocabulary lacks ("diffuse large b-cell lymphoma") stays one phrase.
    _, rest = _consume_for_phrase(lowered, concepts)
    for match in DISEASE_PHRASE.finditer(rest):
        words = match.group(0).split()
        while any(w in STOPWORDS or w in FILLER or w in ARTICLE_NOUNS for w in words[:-1]):  # "used in sickle cell
            words.pop(0)  # disease": the phrase is what follows the last word that cannot be part of it
        if len(words) > 1:
            phrase = " ".join(words)
            clauses.append(f'"{phrase}"[tiab]')
            lowered = lowered.replace(phrase, " ")
    extra = [w for w in leftover_terms(lowered, concepts) if w not in FILLER and w not in
             {"mutations", "mutation", "risk", "articles", "effects", "effect", "role", "outcomes"}]
    clauses += [f"{word}[tiab]" for word in extra[:4]]
    return clauses + types


def _dates(text: str) -> dict[str, str]:
    today = datetime.date.today()
    if m := re.search(r"\b(?:last|past|previous)\s+(\d{1,2}|five|ten|two|three)\s+years?\b", text, re.I):
        years = {"two": 2, "three": 3, "five": 5, "ten": 10}.get(m.group(1).lower()) or int(m.group(1))
        return {"date_start": str(today.year - years)}
    if m := re.search(r"\b(?:since|after|from)\s+((?:19|20)\d\d)\b", text):
        return {"date_start": m.group(1)}
    return {}


def _query_card(req: DemoRequest, query: str, lead: str, covered: str, dates: dict[str, str] | None = None) -> Reply:
    data: dict[str, Any] = {"query": query, "explanation": covered, **(dates or {})}
    return Reply.text(f"{lead}\n\n" + marker_json("PUBMED_QUERY:", data) + page_suggestions(req))


@intent(priority=310)
def pubmed_query_card(req: DemoRequest) -> Reply | None:
    if not req.offers_marker("PUBMED_QUERY:"):
        return None
    text = req.user_text
    state = read(req.page, req.page_context)
    current = state.search.get("query") or ""
    zero = _zero_note(state)
    clauses = query_clauses(text)
    dates = _dates(text)
    dropped = [m.group(1) for m in DROP.finditer(text)]
    if current and (BROADEN.search(text) or dropped or (zero and not clauses)):
        return _pubmed_broaden(req, current, dropped, zero)
    named = [c for c in clauses if not c.endswith("[tiab]")]  # MeSH concepts or publication types
    if current and (REFINE.search(text) or (named and not ARTICLE_WORDS.search(text))):
        parts = split_and(current)
        if not clauses:  # "improve this query": the same words with MeSH headings and synonyms
            rebuilt = query_clauses(current) if "[" not in current else parts
            query = " AND ".join(_grouped(c) for c in rebuilt)
            return _query_card(req, query, ((zero + " ") if zero else "") + "Here's your query with MeSH headings "
                               "and free-text synonyms, so older and newly indexed articles are both found.",
                               f"The current query ({current}) with MeSH headings and synonyms.")
        query = " AND ".join(_grouped(c) for c in [*parts, *clauses])
        return _query_card(req, query, ((zero + " ") if zero else "") + "Here's your current query narrowed as "
                           "asked; Accept runs it.", f"The current query ({current}) AND {' AND '.join(clauses)}.",
                           dates)
    if not clauses or not (ASKS_ARTICLES.search(text) or ARTICLE_WORDS.search(text)) or \
            not (named or ARTICLE_WORDS.search(text) or FIND.search(text) and len(clauses) > 1):
        return None
    query = " AND ".join(clauses)
    return _query_card(req, query, ((zero + " ") if zero else "") + "Here's a PubMed query for that. Accept puts it "
                       "in the search box and runs it.", "Searches for what you named, combining MeSH headings with "
                       "free-text synonyms so older and newly indexed articles are both found.", dates)


def _pubmed_broaden(req: DemoRequest, current: str, dropped: list[str], zero: str) -> Reply:
    parts = split_and(current)
    removed: list[str] = []
    for phrase in dropped:
        stems = [w[:5].lower() for w in re.findall(r"[A-Za-z]{3,}", phrase) if w.lower() not in FILLER]
        removed += [p for p in parts if any(s in p.lower() for s in stems) and p not in removed]
    if not removed and len(parts) > 1:
        typed = [p for p in parts if "[pt]" in p.lower()]
        removed = typed or [parts[-1]]
    kept = [p for p in parts if p not in removed] or parts
    if kept == parts:  # one clause: loosen it instead (title/abstract → all fields)
        query = re.sub(r"\[tiab\]", "", current)
        change = "searching all fields instead of only titles and abstracts"
    else:
        query = " AND ".join(_grouped(p) for p in kept)
        change = f"without {' and '.join(removed)}"
    lead = (f"{zero} " if zero else "") + f"Here's a broader query: the same, {change}. Accept runs it."
    return _query_card(req, query, lead, f"A broader version of {current}.")
