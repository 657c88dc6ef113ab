"""AI column cards of the demo model: a short name from what was asked, clean criteria, boolean or text.

"Add a column with the eligible age range" extracts (text); "flag the ones that report overall survival",
"I only want trials that allow prior immunotherapy" or "is it an RCT?" decide (boolean). Well-known asks
(randomized, sample size, age range, primary endpoint, design…) have curated names and criteria; anything
else is named from its own words, with the verb kept ("Excludes brain metastases?").
"""

from __future__ import annotations

import re

from backend.demo.brain import DemoRequest, intent, marker_json
from backend.demo.wire import Reply

# What a request calls the rows it is about ("the trials that…", "of each article", "papers which…").
RECORDS = r"trials?|articles?|papers?|studies"
WANTS_COLUMN = re.compile(r"\bcolumns?\b|^\s*(?:please\s+)?(?:flag|mark|tag|label|highlight)\b|"
                          rf"\b(?:only|just)\s+(?:want\s+|keep\s+|show\s+)?(?:the\s+)?(?:{RECORDS}|ones)\s+"
                          r"(?:that|which|where|who)\s+(?!are\s+(?:in|from|phase|sponsored|recruiting))", re.I)
BOOLEAN_CUES = re.compile(r"\b(whether|yes/no|yes or no|flag|flags|mark|tag|highlight|only|just|does|do|is it|"
                          r"are they|is each|is the|if (?:each|it|the|they))\b", re.I)
TEXT_CUES = re.compile(r"\b(extract|list|what is|what are|which|noting|showing|with the|for the|of each|value)\b",
                       re.I)
# (pattern over the request, name, type it implies, criteria: {noun} is "trial" or "article")
KNOWN: tuple[tuple[str, str, str, str], ...] = (
    (r"\brandomi[sz]|\brcts?\b", "Randomized?", "boolean",
     "Is this {noun} a randomized controlled trial (participants randomly assigned to groups)?"),
    (r"\bplacebo", "Placebo-controlled?", "boolean", "Does this {noun} compare against a placebo?"),
    (r"\b(?:double[- ]|single[- ])?blind", "Blinded?", "boolean",
     "Is this {noun} blinded (single- or double-blind)?"),
    (r"\b(?:eligible )?age range|\beligible ages?\b|\bage limits?\b|\bhow old\b", "Eligible age range", "text",
     "What age range is eligible for this {noun}? Give the minimum and maximum age."),
    (r"\bsample size|\bnumber of (?:patients|participants|subjects)|\bhow many (?:patients|participants)|"
     r"\benrol+ment\b|\bcohort size", "Sample size", "text",
     "How many participants does this {noun} enroll or analyze? Give the number."),
    (r"\bprimary (?:end ?point|outcome)", "Primary endpoint", "text",
     "What is the primary endpoint of this {noun}? Summarize in a few words (e.g. overall survival, PFS, ORR)."),
    (r"\bsecondary (?:end ?point|outcome)", "Secondary endpoints", "text",
     "What are the secondary endpoints of this {noun}? List them briefly."),
    (r"\b(?:study )?design\b|\bstudy type\b|\btype of study\b", "Study design", "text",
     "What is the study design of this {noun} (e.g. randomized controlled trial, cohort study, review)?"),
    (r"\b(?:which|what) drugs?\b|\bdrugs? (?:studied|tested|used)|\binterventions?\b|\btreatments? (?:studied|tested)",
     "Drug studied", "text", "Which drug or intervention does this {noun} study? Name it."),
    (r"\b(?:main|key) exclusion|\bexclusion criteria\b", "Key exclusion criteria", "text",
     "What are the main exclusion criteria of this {noun}? List the key ones briefly."),
    (r"\b(?:main|key) inclusion|\binclusion criteria\b", "Key inclusion criteria", "text",
     "What are the main inclusion criteria of this {noun}? List the key ones briefly."),
    (r"\bsponsor", "Sponsor", "text", "Who sponsors this {noun}?"),
    (r"\bcountr(?:y|ies)|\blocations?\b|\bsites?\b", "Countries", "text", "In which countries does this {noun} run?"),
    (r"\bfollow[- ]up\b", "Follow-up", "text", "How long is the follow-up in this {noun}?"),
)
LEADS = (r"^(?:that|which)\s+", r"^(?:says|shows|tells(?: me)?|flags?|marks?|indicates?|notes?)\s+",
         r"^(?:whether|if)\s+", r"^(?:is it|are they|does it)\s+(?=about\b)",
         rf"^(?:the\s+)?(?:{RECORDS}|ones|rows)\s+(?:(?:that|which)\s+(?:are\s+)?)?",
         r"^(?:about|on|concerning|regarding)\s+")
VERBS = {"exclude": "Excludes", "excludes": "Excludes", "excluding": "Excludes", "allow": "Allows",
         "allows": "Allows", "allowing": "Allows", "accept": "Allows", "accepts": "Allows", "permit": "Allows",
         "permits": "Allows", "report": "Reports", "reports": "Reports", "reporting": "Reports",
         "include": "Includes", "includes": "Includes", "including": "Includes", "mention": "Mentions",
         "mentions": "Mentions", "use": "Uses", "uses": "Uses", "using": "Uses", "require": "Requires",
         "requires": "Requires", "measure": "Measures", "measures": "Measures", "enrol": "Enrolls",
         "enroll": "Enrolls", "enrolls": "Enrolls", "test": "Tests", "tests": "Tests", "study": "Studies",
         "studies": "Studies", "have": "Has", "has": "Has", "involve": "Involves", "involves": "Involves"}
QUESTIONS = {"Excludes": "Do this {noun}'s eligibility criteria exclude patients with {x}?",
             "Allows": "Based on the eligibility criteria, does this {noun} allow patients with {x}? Consider both "
                       "inclusion and exclusion criteria.",
             "Has": "Does this {noun} have {x}?", "Requires": "Does this {noun} require {x}?"}


def _clean(phrase: str) -> str:
    phrase = re.sub(r"\b(?:each|every|the|this|a|an)\s+(?:study|trial|article|paper|one|record)('s)?\b", " ", phrase,
                    flags=re.I)
    phrase = re.sub(rf"\b(?:of|for|in|per)\s+(?:each|every|all|the)?\s*(?:{RECORDS}|study|ones?|rows?)\b", " ", phrase,
                    flags=re.I)
    phrase = re.sub(r"\binto a column\b|\bas a column\b|\bplease\b", " ", phrase, flags=re.I)
    return " ".join(phrase.strip(" ?.!:,").split())


def column_spec(text: str, noun: str) -> dict[str, str] | None:
    """The AI column a request asks for, or None when it does not ask for one."""
    if not WANTS_COLUMN.search(text):
        return None
    lowered = text.lower()
    boolean = bool(BOOLEAN_CUES.search(text) or text.rstrip().endswith("?"))
    verb_match = re.search(rf"\b(?:that|which|who|whether|if|to|{RECORDS}|study|ones|it|they)\s+"
                           r"(?:each\s+\w+\s+)?"
                           rf"({'|'.join(VERBS)})\s+(.+)", text, re.I)
    excluding = re.search(r"\b(exclud\w*|allow\w*|accept\w*|permit\w*)\s+(?:patients\s+)?(?:with\s+)?(.+)", text, re.I)
    for pattern, name, kind, criteria in KNOWN:
        if re.search(pattern, lowered) and not (kind == "text" and verb_match and boolean and "criteria" not in name
                                                and name not in ("Sample size",)):
            if name.startswith("Key ") and not re.search(r"\b(extract|list|main|key|what)\b", lowered):
                break  # "excluding patients with …" is a yes/no question, below
            return {"name": name, "type": kind, "criteria": criteria.format(noun=noun),
                    "explanation": f"{'Marks' if kind == 'boolean' else 'Extracts'} this for each {noun} loaded."}
    if boolean and (verb_match or excluding):
        verb_word, thing = (excluding.group(1), excluding.group(2)) if excluding else verb_match.groups()  # type: ignore[union-attr]
        verb = VERBS.get(verb_word.lower(), "Excludes" if verb_word.lower().startswith("exclud") else "Allows")
        thing = _clean(re.sub(r"^(?:patients|participants|people)\s+with\s+", "", thing, flags=re.I)) \
            if verb in ("Excludes", "Allows") else _clean(thing)
        question = QUESTIONS.get(verb, "Does this {noun} " + verb.lower().rstrip("s").replace("studie", "study")
                                 + " {x}?").format(noun=noun, x=thing)
        return {"name": f"{verb} {thing}?"[:60], "type": "boolean", "criteria": question,
                "explanation": f"Marks each {noun} Yes/No; filter to Yes to keep the matches."}
    subject = re.search(r"\bcolumns?\b\s*(?::|for|with|showing|that shows|of|noting|listing|giving)?\s*(.+)", text,
                        re.I)
    phrase = _clean(subject.group(1) if subject else text)
    for lead in LEADS:  # "that flags articles about X" → "X"
        phrase = re.sub(lead, "", phrase, flags=re.I)
    if not phrase:
        return None
    if boolean:
        if re.match(r"(?:is|are|does|do|has|have|was|were)\b", phrase, re.I):
            criteria = f"{phrase[:1].upper()}{phrase[1:]}?"
        else:
            where = ("title, abstract and keywords" if noun == "article"
                     else "title, conditions, interventions and summary")
            criteria = f"Is this {noun} about {phrase}? Answer from its {where}."
        name = phrase[:1].upper() + phrase[1:]
        return {"name": f"{name}?"[:60], "type": "boolean", "criteria": criteria,
                "explanation": f"Marks each {noun} Yes/No; filter to Yes to keep the matches."}
    name = re.sub(r"^(?:the|a|an)\s+", "", phrase, flags=re.I)
    return {"name": (name[:1].upper() + name[1:])[:60], "type": "text",
            "criteria": f"What is the {name} of this {noun}? Answer in a few words, or say it is not reported.",
            "explanation": f"Extracts the {name} of each {noun} so you can compare them side by side."}


@intent(priority=205)
def ai_column_card(req: DemoRequest) -> Reply | None:
    if not req.offers_marker("AI_COLUMN:") or req.tool_results:
        return None
    noun = "trial" if req.page == "trialscout" else "article"
    spec = column_spec(req.user_text.strip(), noun)
    if spec is None:
        return None
    return Reply.text(f"An AI column can check that for every {noun} loaded. Accept adds it to the table.\n\n"
                      + marker_json("AI_COLUMN:", spec))
