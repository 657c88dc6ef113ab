"""Questions about the product itself ("how does this page work?", "what does this column mean?", "how do I
add a filter?"): answered from what the request says about the page (its cards, tools, client actions and the
fields the system prompt lists, and the page context's state), never read as a search for "does work".

A request is such a question only when every word of it is the product's own vocabulary (question words,
the interface's nouns and verbs, the field and card names the request itself lists, or a name quoted as
"the … column"): a word the demo doesn't know here (a drug, a disease, a place) keeps it a real request for
the other intents ("how does pembrolizumab work in melanoma trials" is still a search).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from backend.demo.brain import DemoRequest, intent
from backend.demo.general import page_suggestions, stream_note
from backend.demo.vocabulary import phases_in, statuses_in
from backend.demo.wire import Reply

# The interface: a request naming one of these (or asking what the assistant can do) is about the product.
INTERFACE = frozenset("""page pages app application tool tools site website product trialscout tablizer colleague
card cards column columns filter filters chip chips form table button buttons accept dismiss panel tray chat
feature features field fields value values box snapshot snapshots chart charts interface screen tab tabs sidebar
menu help works work started start use using mean means meaning stand does do""".split())
# Words that carry no subject: how a question is asked, what it is asked of, and the page's generic nouns.
GENERIC = (
    set(
        """a an the and or of for in on to with about at by from into is are was be been am it its it's this
that these those there here what what's whats which who how why where when can could should would will may might
must shall i i'm im me my we our us you your you're yourself he she they them their do does did doing done
have has had get gets got go make makes made let let's lets see show shows showing tell explain explains
describe mean means meaning meant stand stands for if any some each every all one ones other another more
most just also only again please thanks thank ok okay hi hello hey so then than not no yes up down out over
next new kind kinds sort sorts type types thing things way ways difference different between vs versus
same work works working worked use used uses using start started starting begin beginning supposed able
ask asking asked question questions answer help helps know learn understand offer offers offered suggest
suggests suggested give gives click clicking clicked press pressing happen happens happened add adding added
remove removing removed delete clear change changing edit set setting create creating build building run
running save saving saved load loading loaded export exporting exported open opening find search searching
searched filter filtering sort sorting number numbers label labels name names word words icon icons link
links row rows result results item items entry entries list lists trial trials article articles paper papers
record records study studies data info information feature features option options setting settings
access available whole full guide tour tutorial manual documentation docs""".split()
    )
    | INTERFACE
)
ASKS = re.compile(
    r"^(?:how|what|what's|whats|which|where|why|can|could|is|are|does|do|explain|describe|tell|"
    r"help|walk|show me how|i don't understand|i dont understand|not sure)\b|\bhow (?:do|can|should|"
    r"would|does|to)\b|\b(?:mean|means|meaning|stand for)\b|\?\s*$",
    re.I,
)
# Asking what the assistant can do or how the page works, in so many words.
ABOUT_ASSISTANT = re.compile(
    r"\bwhat (?:can|do|should) (?:you|i)\b|\b(?:ask|tell|use|using) you\b|\bget started\b|"
    r"\bhow (?:do|does) (?:this|it) work",
    re.I,
)
# Asking what something means: a screening's verdicts and scores are the page's own words then.
EXPLAINS = re.compile(
    r"\b(?:mean|means|meaning|stand for|explain|what(?: i|')s an?|how (?:is|are)|calculated|computed)\b", re.I
)
# "the Allows Brain Mets column", "the n= number": a name the page shows, quoted by the user.
NAMED = re.compile(
    r"\bthe\s+(.{1,40}?)\s+(?:column|field|filter|chip|chart|button|tab|card|value|values|"
    r"number|score|label|badge)s?\b",
    re.I,
)
# A patient's screening in the page context: its verdicts and scores are the page's words then.
SCREENED = re.compile(r"^SCREENING \d+ .*$", re.M)
SCREENING_ENTRY = re.compile(r"^1\. (NCT\d{8}) \| (\w+) \| (score [\d.]+ \| met \d+, not met \d+, unknown \d+)", re.M)
SCREENING_WORDS = frozenset("""verdict verdicts score scores eligible excluded uncertain relevant met unknown screening
shortlist rank ranking""".split())
TOKEN = re.compile(r"[a-z0-9][a-z0-9'=_\-]*", re.I)
CARD_LINE = re.compile(r"^([A-Z][A-Z_]+) - (.*)$", re.M)
ACTION_LINE = re.compile(r"^- (\w+)(?: \(data: [^)]*\))?: (.*)$", re.M)


@dataclass(frozen=True)
class Page:
    """What the request says about its page."""

    app: str
    cards: dict[str, str]  # marker → when to use it ("Use when the user asks to search for clinical trials")
    tools: dict[str, str]  # name → first sentence of its description
    actions: dict[str, str]  # client action → what it does
    fields: set[str]  # the field and facet names the system prompt lists for this page
    ai_columns: list[str]  # the page context's AI column lines

    @property
    def row(self) -> str:
        return "trial" if self.app == "TrialScout" else "article"


def read_page(req: DemoRequest) -> Page:
    system = req.system
    cards_part = system.split("## Cards you can offer", 1)[-1].split("\n## ", 1)[0] if "## Cards" in system else ""
    cards = {
        m.group(1): _sentence(m.group(2))
        .removeprefix("Use ")
        .replace("the user wants", "you want")
        .replace("the user asks", "you ask")
        for m in CARD_LINE.finditer(cards_part)
    }
    tools = {name: _sentence(str(t.get("description", ""))) for name, t in req.tools.items()}
    actions_part = (
        system.split("Client actions on this page:", 1)[1] if "Client actions on this page:" in system else ""
    )
    actions = {m.group(1): m.group(2).strip() for m in ACTION_LINE.finditer(actions_part)}
    app = "TrialScout" if req.page == "trialscout" else "Tablizer"
    fields = {
        re.sub(r"\(.*?\)", "", name).strip(" .").replace("_", " ")
        for listed in re.findall(rf"\b[Oo]n {app}(?: and [^:\n]*)?: ([^;.\n]*)", re.sub(r"\(.*?\)", "", system))
        for name in listed.split(",")
    } - {""}
    context = req.page_context
    ai = context.split("AI COLUMNS:", 1)[1].split("\n\n", 1)[0].splitlines()[1:] if "AI COLUMNS:" in context else []
    return Page(app, cards, tools, actions, fields, [line.strip() for line in ai if not line.startswith("  ")])


def _sentence(text: str) -> str:
    first = re.split(r"(?<=[.:])\s", text.strip(), maxsplit=1)[0]
    return first.rstrip(":").strip()


def _words(text: str) -> list[str]:
    return [w.strip("'-").lower() for w in TOKEN.findall(text)]


def is_product_question(req: DemoRequest, page: Page) -> bool:
    text = req.user_text.strip()
    if not text or len(text) > 200 or not ASKS.search(text):
        return False
    if phases_in(text) or statuses_in(text) or re.search(r"\b(?:NCT\d{8}|PMID)\b|\d{4,}", text, re.I):
        return False  # a value to search or filter for: the request has a subject
    named = {w for m in NAMED.finditer(text) for w in _words(m.group(1))}
    known = (
        GENERIC
        | named
        | {w for f in page.fields for w in f.split()}
        | {w for marker in page.cards for w in marker.lower().split("_")}
        | {w for name in page.tools for w in name.split("_")}
        | {"ai", "pubmed", "clinicaltrials", "gov", "n="}
    )
    screened = SCREENED.search(req.page_context) is not None
    if screened:
        known |= SCREENING_WORDS
    words = _words(text)
    explains = EXPLAINS.search(text) is not None
    about_product = (
        any(w in INTERFACE or (screened and explains and w in SCREENING_WORDS) for w in words)
        or bool(named)
        or ABOUT_ASSISTANT.search(text) is not None
    )
    return about_product and all(w in known or w.isdigit() for w in words)


# -- answers -------------------------------------------------------------------------------------------


def _cards_text(page: Page, *markers: str) -> list[str]:
    chosen = [m for m in markers if m in page.cards] or list(page.cards)
    return [f"- **{_card_name(m)}** card: use {page.cards[m][0].lower() + page.cards[m][1:]}" for m in chosen]


def _card_name(marker: str) -> str:
    return {
        "AI_COLUMN": "AI column",
        "PUBMED_QUERY": "PubMed query",
        "TRIAL_SEARCH": "Trial search",
        "FILTER_SUGGESTION": "Filter",
    }.get(marker, marker.replace("_", " ").capitalize())


def _state(req: DemoRequest) -> str:
    """The page as it is now, in one line: results, filter chips, AI columns."""
    context = req.page_context
    parts = []
    if m := re.search(r"^- Results: (.*)$", context, re.M):
        parts.append(f"results {m.group(1)}")
    if m := re.search(r"^- Active filters(?: \([^)]*\))?: (.*)$", context, re.M):
        parts.append("no filter chips" if m.group(1) == "none" else f"filter chips {m.group(1)}")
    if m := re.search(r"^AI COLUMNS: (.*)$", context, re.M):
        parts.append("no AI columns yet" if m.group(1) == "none" else f"AI columns: {m.group(1)}")
    return f"On the page now: {'; '.join(parts)}." if parts else ""


def _topic(text: str) -> str:
    lowered = text.lower()
    for topic, pattern in (
        ("column", r"\bcolumns?\b|\bn=|\bnumber\b|\bscores?\b|\bverdicts?\b|\bbadge\b"),
        ("filter", r"\bfilters?\b|\bchips?\b"),
        ("card", r"\bcards?\b|\baccept\b|\bdismiss\b"),
        ("tools", r"\btools\b|\baccess\b"),
        ("chart", r"\bcharts?\b"),
        ("search", r"\bsearch\b|\bquery\b|\bform\b|\bsearch box\b"),
    ):
        if re.search(pattern, lowered):
            return topic
    if re.search(r"\b(?:field|value)s?\b", lowered):
        return "column"
    return "page"


ALIASES = {"n=": "enrollment", "n": "enrollment"}  # how the page context writes a field in its rows


def _column_answer(req: DemoRequest, page: Page, text: str) -> list[str]:
    names = [
        re.sub(r"^(?:(?:a|an|the|this|that)\s+)+", "", m.group(1).strip(" \"'“”"), flags=re.I)
        for m in NAMED.finditer(text)
    ]
    name = next((n for n in names if n and not set(_words(n)) <= GENERIC | {"ai"}), "")
    field = ALIASES.get(name.lower(), name.lower())
    asked = set(_words(text))
    own = "AI_COLUMN" in page.cards and ("ai" in asked or (not name and bool({"column", "columns"} & asked)))
    lines: list[str] = []
    ai = [line for line in page.ai_columns if name and name.lower() in line.lower()]
    if own:
        lines.append(
            "An AI column is one you add: ask for it in plain words (e.g. “add a column that says "
            f"whether each {page.row} is randomized”) and Accept the AI column card; the AI reads every "
            f"loaded {page.row} against its criteria and fills in yes/no or a short extracted answer."
        )
    if ai:
        lines.append(
            f"“{name}” is one of your AI columns: {ai[0]}. Each row's answer comes from the AI "
            f"reading that {page.row}'s record against the column's criteria."
        )
    elif field and field in page.fields:
        values = re.search(rf"^{re.escape(field.title())} values: (.*)$", req.system, re.M)
        lines.append(
            f"“{name}” is the {field} the page shows for each {page.row} (and can filter on)"
            + (f"; its values are {values.group(1)}." if values else ".")
        )
    elif (screening := SCREENED.search(req.page_context)) and (
        name or {"verdict", "verdicts", "score", "scores"} & asked
    ):
        tally = re.search(r"\((.*?); (\d+) trials screened: ([^)]*)\)", screening.group(0))
        example = SCREENING_ENTRY.search(req.page_context)
        lines.append(
            (
                f"The page doesn't name a column “{name}” to me; if it is the patient screening's, here is "
                "what that screening gives each trial. "
                if name and name.lower() not in SCREENING_WORDS
                else ""
            )
            + "The loaded patient's screening gives each screened trial a verdict (eligible, "
            "uncertain, excluded or not relevant) and a score, with how many of the trial's criteria the "
            "patient meets, does not meet, or leaves unknown; trials are ranked best first. "
            + (f"The screening shown ({tally.group(1)}) has {tally.group(2)} trials: {tally.group(3)}" if tally else "")
            + (
                f"; the first is {example.group(1)}: {example.group(2)}, {example.group(3).replace(' | ', ', ')}."
                if example
                else "."
            )
            + " Ask me why a trial got its verdict and I read it from the screening."
        )
    elif name:
        lines.append(f"The page doesn't describe a column called “{name}” to me, so I won't guess what it holds.")
    if page.fields:
        lines.append(f"The fields I know on {page.app}: " + ", ".join(sorted(page.fields)) + ".")
    return lines


def _answer(req: DemoRequest, page: Page) -> str:
    text = req.user_text
    topic = _topic(text)
    noun = "trials" if page.app == "TrialScout" else "articles"
    if topic == "column":
        body = _column_answer(req, page, text)
    elif topic == "filter":
        body = [
            "Filter chips narrow the loaded table by a field without running a new search: ask for one "
            f"(e.g. “only show {'phase 3' if page.app == 'TrialScout' else 'reviews'}”) and Accept the card; "
            "remove the chip to undo. Changing the search itself (new results) is a search card instead.",
            *_cards_text(page, "FILTER_SUGGESTION"),
            _state(req),
        ]
    elif topic == "card":
        body = [
            "When something I suggest can be applied to the page, I offer it as a card: **Accept** applies it "
            "(fills and runs the search, adds the column or the filter), **Dismiss** leaves the page as it is. "
            "Cards on this page:",
            *_cards_text(page),
        ]
    elif topic == "tools":
        body = ["The tools I can use on this page:", *(f"- `{n}`: {d}" for n, d in page.tools.items())]
    elif topic == "chart":
        body = _cards_text(page, "CHART")
    elif topic == "search":
        search = "TRIAL_SEARCH" if "TRIAL_SEARCH" in page.cards else "PUBMED_QUERY"
        body = [
            f"Tell me what you are looking for in plain words (a condition, a drug, filters such as phase or "
            f"dates) and I offer a {_card_name(search).lower()} card; Accept puts it in the "
            f"{'form' if search == 'TRIAL_SEARCH' else 'search box'} and runs it. You can also type in "
            f"the {'form' if search == 'TRIAL_SEARCH' else 'search box'} yourself.",
            *_cards_text(page, search),
        ]
    else:
        body = [
            f"I see what the page shows (the search, the loaded {noun}, your AI columns and filters) and can "
            "offer cards you Accept or Dismiss:",
            *_cards_text(page),
        ]
        if page.tools:
            body.append(
                "I can also look things up with the tools here: " + ", ".join(f"`{n}`" for n in page.tools) + "."
            )
        if page.actions:
            body.append(
                "Buttons I can offer: " + "; ".join(f"{d.split(':')[0].lower()}" for d in page.actions.values()) + "."
            )
        body.append(_state(req))
    return _join(body)


def _join(lines: list[str]) -> str:
    """Paragraphs, with a list's items on consecutive lines."""
    out = ""
    for line in filter(None, lines):
        out += ("\n" if line.startswith("- ") else "\n\n") + line if out else line
    return out


@intent(priority=135)
def product_question(req: DemoRequest) -> Reply | None:
    """A question about the page or the assistant: what it can do, what a card, column or filter is for."""
    if req.tool_results or req.page not in ("trialscout", "tablizer"):
        return None
    page = read_page(req)
    if not is_product_question(req, page):
        return None
    return Reply.text(_answer(req, page) + stream_note(req) + page_suggestions(req))
