"""What every export shares: Markdown to safe HTML, readable tool steps, linked sources, charts as SVG.

Answers are Markdown written by a model; in HTML they are rendered with raw HTML disabled (markup in an
answer shows as text, never runs), and every other value goes through Jinja's autoescaping.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup, escape

from backend.agent.schemas import Card, ToolCall
from backend.exports.inert import DOCUMENT_POLICY, image_rule
from backend.exports.schemas import ChartPoint
from backend.text import clip

NCT = re.compile(r"\bNCT\d{8}\b")
PMID = re.compile(r"\bPMID:?\s*(\d{1,10})\b", re.IGNORECASE)
COUNT = re.compile(r"(\d[\d,]*) (?:articles|trials|results|studies) match|Found (\d[\d,]*)")

TOOL_LABELS = {
    "search_pubmed": "Searched PubMed",
    "get_pubmed_article": "Read a PubMed article",
    "search_trials": "Searched ClinicalTrials.gov",
    "get_trial": "Read a trial record",
    "get_staged_items": "Read the page's loaded rows",
}
CARD_LABELS = {
    "pubmed_query_suggestion": "Suggested PubMed query",
    "trial_search_suggestion": "Suggested trial search",
    "ai_column_suggestion": "Suggested AI column",
    "trial_details": "Trial details",
    "trial_search_results": "Trial search results",
    "pubmed_search_results": "PubMed search results",
    "chat_instructions_suggestion": "Suggested chat instructions",
    "chart": "Chart",
}


@cache
def markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table").enable("strikethrough")
    md.add_render_rule("image", image_rule)  # an image is text: nothing loads when the file opens
    return md


def markdown_html(text: str) -> Markup:
    return Markup(markdown().render(text or ""))  # noqa: S704 - raw HTML is disabled in the renderer


@cache
def templates() -> Environment:
    env = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True))
    env.filters["markdown"] = markdown_html
    env.globals["document_policy"] = DOCUMENT_POLICY
    return env


def words(value: str) -> str:
    return value.replace("_", " ").strip().capitalize()


def card_label(card: Card) -> str:
    return CARD_LABELS.get(card.type, words(card.type))


@dataclass(frozen=True)
class Step:
    """One tool call as a reader sees it: "Searched PubMed for 'lung cancer' · 24 results"."""

    label: str
    detail: str
    count: int | None
    is_error: bool

    def line(self) -> str:
        text = f"{self.label}{f' for {self.detail}' if self.detail else ''}"
        if self.is_error:
            return f"{text} · failed"
        if self.count is not None:
            return f"{text} · {self.count:,} result{'' if self.count == 1 else 's'}"
        return text


def _detail(call: ToolCall) -> str:
    data = call.input
    for key in ("query", "condition", "nct_id", "pmid", "kind"):
        value = data.get(key)
        if value:
            return f"'{value}'" if key in ("query", "condition") else str(value)
    return ""


def steps(calls: Sequence[ToolCall], cards: Sequence[Card]) -> list[Step]:
    """Each call with its result count: from its result card (`total_count`), else from its output."""
    counts: dict[str, list[int]] = {}
    for card in cards:
        if card.source == "tool" and card.tool and isinstance(card.data, Mapping):
            total = card.data.get("total_count")
            if isinstance(total, int):
                counts.setdefault(card.tool, []).append(total)
    out = []
    for call in calls:
        found = counts.get(call.tool_name)
        count = found.pop(0) if found else None
        if count is None and not call.is_error:
            m = COUNT.search(call.output or "")
            count = int((m.group(1) or m.group(2)).replace(",", "")) if m else None
        out.append(Step(TOOL_LABELS.get(call.tool_name, words(call.tool_name)), _detail(call), count, call.is_error))
    return out


@dataclass(frozen=True)
class Source:
    label: str
    url: str


def _ids_in(value: Any, found: dict[str, Source]) -> None:
    """NCT ids and PMIDs in a card's data: `nct_id` / `pmid` keys at any depth."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key == "nct_id" and isinstance(item, str) and NCT.fullmatch(item):
                found.setdefault(item, Source(item, f"https://clinicaltrials.gov/study/{item}"))
            elif key == "pmid" and isinstance(item, str | int) and str(item).isdigit():
                found.setdefault(f"PMID {item}", Source(f"PMID {item}", f"https://pubmed.ncbi.nlm.nih.gov/{item}/"))
            else:
                _ids_in(item, found)
    elif isinstance(value, list):
        for item in value:
            _ids_in(item, found)


def sources(texts: Iterable[str], cards: Iterable[Card] = ()) -> list[Source]:
    """Every trial and article named in the texts (NCT ids, "PMID 123") or carried by the cards, once."""
    found: dict[str, Source] = {}
    for text in texts:
        for nct in NCT.findall(text or ""):
            found.setdefault(nct, Source(nct, f"https://clinicaltrials.gov/study/{nct}"))
        for pmid in PMID.findall(text or ""):
            found.setdefault(f"PMID {pmid}", Source(f"PMID {pmid}", f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/"))
    for card in cards:
        _ids_in(card.data, found)
    return list(found.values())


def bar_chart_svg(title: str, points: Sequence[ChartPoint], width: int = 640) -> Markup:
    """A horizontal bar chart as inline SVG: a static picture of a chart's figures that needs no script.
    Every text is escaped; `<title>` and the value labels make it readable without colour."""
    bar_h, gap, label_w, value_w = 18, 6, 200, 60
    top = 28
    height = top + len(points) * (bar_h + gap) + 8
    peak = max((p.value for p in points), default=0) or 1
    room = width - label_w - value_w - 16
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
             f"<title>{escape(title)}</title>",
             f'<text x="0" y="16" font-size="14" font-weight="bold">{escape(title)}</text>']
    for i, point in enumerate(points):
        y = top + i * (bar_h + gap)
        w = max(1.0, room * point.value / peak)
        label = clip(point.label, 31)
        value = f"{point.value:,.0f}" if float(point.value).is_integer() else f"{point.value:,.2f}"
        parts += [f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end">{escape(label)}</text>',
                  f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="#3b6ea5"/>',
                  f'<text x="{label_w + w + 6:.1f}" y="{y + 13}">{value}</text>']
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704 - built from escaped parts
