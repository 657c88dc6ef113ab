"""A conversation handed on: Markdown, or a standalone HTML page (no scripts, no outside requests).

Each turn reads as the tray showed it: the question, the answer, the tool steps with their result counts,
the cards with the user's decision; then every trial and article the conversation named, linked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from markupsafe import Markup
from sqlalchemy.orm import Session

from backend.agent.schemas import Card, PublicExtras
from backend.conversations.service import get_owned
from backend.exports.inert import inert_markdown
from backend.exports.render import Source, Step, bar_chart_svg, card_label, sources, steps, templates
from backend.exports.schemas import ChartPoint

APP_LABELS = {"tablizer": "Tablizer", "trialscout": "TrialScout", "kh": "Research stream editor"}
SUMMARY_KEYS = ("query", "condition", "intervention", "name", "title", "criteria", "nct_id")


@dataclass
class CardView:
    label: str
    summary: str
    decision: str | None
    chart: Markup | None = None


@dataclass
class TurnView:
    role: str  # user | assistant
    author: str
    when: str
    text: str
    status: str
    steps: list[Step] = field(default_factory=list)
    cards: list[CardView] = field(default_factory=list)
    error: str | None = None


@dataclass
class ConversationExport:
    title: str
    app: str
    exported_at: str
    turns: list[TurnView]
    sources: list[Source]


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def card_summary(data: Any) -> str:
    """A card's gist in one line: its query, search, column or title; a result card's count."""
    if not isinstance(data, Mapping):
        return ""
    parts = []
    for key in SUMMARY_KEYS:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            parts.append(value.strip() if key in ("query", "title", "name") else f"{key.replace('_', ' ')}: {value}")
    for key in ("phase", "status"):
        value = data.get(key)
        if isinstance(value, list) and value:
            parts.append(f"{key}: {', '.join(str(v) for v in value)}")
    if isinstance(data.get("total_count"), int):
        parts.append(f"{data['total_count']:,} results")
    return " · ".join(parts)


def chart_points(data: Any) -> list[ChartPoint] | None:
    """A chart card's figures when it carries them (`points` or `data` of {label, value|count})."""
    if not isinstance(data, Mapping):
        return None
    raw = data.get("points") or data.get("data")
    if not isinstance(raw, list):
        return None
    points = []
    for item in raw[:60]:
        if isinstance(item, Mapping) and isinstance(item.get("label"), str):
            value = item.get("value", item.get("count"))
            if isinstance(value, int | float) and value >= 0:
                points.append(ChartPoint(label=item["label"][:200], value=value))
    return points or None


def _card_view(card: Card) -> CardView:
    view = CardView(card_label(card), card_summary(card.data), card.decision)
    if card.type == "chart":
        points = chart_points(card.data)
        title = card.data.get("title") if isinstance(card.data, Mapping) else None
        if points:
            view.chart = bar_chart_svg(str(title or "Chart"), points)
    return view


def load(s: Session, user_id: int, conversation_id: int) -> ConversationExport:
    """The owner's conversation as an export (another user's is a 404, like every conversation route)."""
    conv = get_owned(s, user_id, conversation_id)
    turns, texts, cards = [], [], []
    for message in conv.messages:
        if message.role == "user":
            turns.append(TurnView("user", "You", _stamp(message.created_at), message.content, message.status))
            continue
        extras = PublicExtras.model_validate(message.extras or {})
        turns.append(TurnView(
            "assistant", "Colleague", _stamp(message.created_at), message.content, message.status,
            steps=steps(extras.tool_history, extras.payloads),
            cards=[_card_view(c) for c in extras.payloads if c.source == "llm" or c.type == "chart"],
            error=extras.error.message if extras.error else None))
        texts.append(message.content)
        cards += extras.payloads
    return ConversationExport(conv.title or "Conversation", APP_LABELS.get(conv.app, conv.app),
                              _stamp(datetime.now(UTC)), turns, sources(texts, cards))


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.splitlines())


def to_markdown(c: ConversationExport) -> str:
    """The conversation as Markdown; every text that came from a person or a model is made inert (its
    images as text, its raw HTML escaped), so a viewer rendering the file loads nothing."""
    md = inert_markdown
    out = [f"# {md(c.title)}", "", f"*{c.app} conversation exported from Colleague on {c.exported_at}*", ""]
    for turn in c.turns:
        out += [f"## {turn.author} · {turn.when}", ""]
        if turn.role == "user":
            out += [_quote(md(turn.text)), ""]
            continue
        out += [f"- {md(step.line())}" for step in turn.steps] + ([""] if turn.steps else [])
        out += [md(turn.text.strip()) or "*(no text)*", ""]
        for card in turn.cards:
            decision = f" — **{md(card.decision)}**" if card.decision else " — not decided"
            out.append(f"- **{card.label}**{': ' + md(card.summary) if card.summary else ''}{decision}")
        if turn.cards:
            out.append("")
        if turn.status != "complete":
            out += [f"*This answer was {turn.status}{': ' + md(turn.error) if turn.error else ''}.*", ""]
    if c.sources:
        out += ["## Sources", ""] + [f"- [{s.label}]({s.url})" for s in c.sources] + [""]
    return "\n".join(out)


def to_html(c: ConversationExport) -> str:
    return templates().get_template("conversation.html.j2").render(c=c)
