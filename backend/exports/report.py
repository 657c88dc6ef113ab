"""A shortlist report: the selected rows with their AI columns, the pinned charts and the assistant's
summary, as a standalone HTML page and as a PDF.

The PDF is laid out with ReportLab (no browser or system libraries; its tables wrap and repeat their
header across pages) in DejaVu Sans, shipped in `fonts/`, so titles in any script
print. Both renderings come from one `ReportView`.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from xml.sax.saxutils import escape

from markdown_it.token import Token
from markupsafe import Markup
from reportlab.graphics.shapes import Drawing, Rect, String
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.pdfmetrics import registerFontFamily
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import Flowable, LongTable, Paragraph, SimpleDocTemplate, Spacer, TableStyle

from backend.exports.render import Source, bar_chart_svg, markdown, sources, templates
from backend.exports.schemas import MAX_REPORT_CELL, ReportChart
from backend.exports.tables import Table
from backend.text import clip

FONTS = Path(__file__).parent / "fonts"
APP_LABELS = {"tablizer": "Tablizer", "trialscout": "TrialScout"}


@dataclass
class ChartView:
    chart: ReportChart
    svg: Markup


@dataclass
class ReportView:
    title: str
    app: str
    query: str | None
    created_at: str
    summary: str | None  # Markdown
    table: Table
    ai_columns: list[str]  # the AI column names, for the details section
    base_columns: int  # how many of the table's columns came from the page (the rest: 3 per AI column)
    charts: list[ChartView]
    sources: list[Source]

    def shortlist(self) -> tuple[list[str], list[list[str]], int | None]:
        """The page's columns and each AI column's verdict (the reasoning is in `details`), and where the
        id column is."""
        base, table = self.base_columns, self.table
        keep = list(range(base)) + [base + 3 * k for k in range(len(self.ai_columns))]
        return [table.header[i] for i in keep], [[row[i] for i in keep] for row in table.rows], table.id_column

    def details(self) -> list[tuple[str, str, list[tuple[str, str, str, str]]]]:
        """Per row: (id, first text column, [(column, verdict, reasoning, evidence)]) for rows with any."""
        out = []
        for i, row in enumerate(self.table.rows):
            answers = []
            for k, name in enumerate(self.ai_columns):
                verdict, reasoning, evidence = row[self.base_columns + 3 * k: self.base_columns + 3 * k + 3]
                if verdict or reasoning:
                    answers.append((name, verdict, reasoning, evidence))
            if answers:
                out.append((self.table.ids[i], self._row_title(row), answers))
        return out

    def _row_title(self, row: Sequence[str]) -> str:
        header = self.table.header
        for name in ("Title", "title"):
            if name in header[: self.base_columns]:
                return row[header.index(name)]
        return row[1] if self.base_columns > 1 else ""


def view(title: str, app: str, query: str | None, summary: str | None, table: Table, ai_columns: list[str],
         charts: Sequence[ReportChart]) -> ReportView:
    """The report of `table`, each cell kept to MAX_REPORT_CELL characters (the HTML and PDF lay every one out)."""
    table.rows = [[clip(cell, MAX_REPORT_CELL) for cell in row] for row in table.rows]
    base = len(table.header) - 3 * len(ai_columns)
    found = sources([summary or ""]) + [Source(i, link) for i, link in zip(table.ids, table.links, strict=True)]
    unique = list({s.url: s for s in found}.values())
    drawn = [ChartView(c, bar_chart_svg(c.title, c.points)) for c in charts]
    return ReportView(title, APP_LABELS.get(app, app), query, datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
                      summary, table, ai_columns, base, drawn, unique)


def to_html(report: ReportView) -> str:
    return templates().get_template("report.html.j2").render(r=report)


def _fonts() -> None:
    """DejaVu Sans, shipped with the project, so a title in any script prints (registered once)."""
    if "DejaVu" in pdfmetrics.getRegisteredFontNames():
        return
    pdfmetrics.registerFont(TTFont("DejaVu", str(FONTS / "DejaVuSans.ttf")))
    pdfmetrics.registerFont(TTFont("DejaVu-Bold", str(FONTS / "DejaVuSans-Bold.ttf")))
    registerFontFamily("DejaVu", normal="DejaVu", bold="DejaVu-Bold", italic="DejaVu", boldItalic="DejaVu-Bold")


def _styles() -> dict[str, ParagraphStyle]:
    base = ParagraphStyle("body", fontName="DejaVu", fontSize=9.5, leading=13)
    return {
        "body": base,
        "title": ParagraphStyle("title", base, fontName="DejaVu-Bold", fontSize=18, leading=23, spaceAfter=4),
        "meta": ParagraphStyle("meta", base, fontSize=8.5, textColor=colors.HexColor("#5b6475")),
        "h2": ParagraphStyle("h2", base, fontName="DejaVu-Bold", fontSize=13, leading=17, spaceBefore=10,
                             spaceAfter=4),
        "h3": ParagraphStyle("h3", base, fontName="DejaVu-Bold", fontSize=10.5, leading=14, spaceBefore=6),
        "cell": ParagraphStyle("cell", base, fontSize=7.5, leading=9.5),
        "head": ParagraphStyle("head", base, fontName="DejaVu-Bold", fontSize=7.5, leading=9.5),
        "small": ParagraphStyle("small", base, fontSize=8, leading=10.5),
        "bullet": ParagraphStyle("bullet", base, leftIndent=12, bulletIndent=2),
    }


def _inline(children: Sequence[Token]) -> str:
    """An inline Markdown run as ReportLab paragraph markup: text escaped, emphasis, code and links kept."""
    out = []
    for t in children:
        if t.type == "text":
            out.append(escape(t.content))
        elif t.type == "code_inline":
            out.append(f'<font face="Courier">{escape(t.content)}</font>')
        elif t.type in ("softbreak", "hardbreak"):
            out.append("<br/>" if t.type == "hardbreak" else " ")
        elif t.type in ("strong_open", "strong_close"):
            out.append("<b>" if t.type.endswith("open") else "</b>")
        elif t.type in ("em_open", "em_close"):
            out.append("<i>" if t.type.endswith("open") else "</i>")
        elif t.type == "link_open":
            href = str(t.attrGet("href") or "")
            out.append(f'<a href="{escape(href, {chr(34): "&quot;"})}" color="#2f5f92">' if href.startswith(
                ("http://", "https://")) else "<a>")
        elif t.type == "link_close":
            out.append("</a>")
    return "".join(out).replace("<a></a>", "")


def _markdown(text: str, styles: dict[str, ParagraphStyle]) -> list[Flowable]:
    """The summary's blocks as paragraphs: headings, paragraphs and list items (tables read as text)."""
    flow: list[Flowable] = []
    tokens = markdown().parse(text)
    style, bullet = styles["body"], None
    for token in tokens:
        if token.type == "heading_open":
            style = styles["h3"]
        elif token.type == "list_item_open":
            bullet = "•"
        elif token.type == "list_item_close":
            bullet = None
        elif token.type in ("code_block", "fence"):
            flow.append(Paragraph(escape(token.content).replace("\n", "<br/>"), styles["small"]))
        elif token.type == "inline" and token.children is not None:
            markup = _inline(token.children)
            if markup.strip():
                flow.append(Paragraph(markup, styles["bullet"] if bullet else style, bulletText=bullet))
            style = styles["body"]
    return flow


def _chart(chart: ReportChart, width: float) -> Drawing:
    bar_h, gap, label_w, top = 11, 4, 150, 18
    height = top + len(chart.points) * (bar_h + gap)
    peak = max(p.value for p in chart.points) or 1
    room = width - label_w - 60
    drawing = Drawing(width, height)
    drawing.add(String(0, height - 12, chart.title, fontName="DejaVu-Bold", fontSize=10))
    for i, point in enumerate(chart.points):
        y = height - top - (i + 1) * (bar_h + gap) + gap
        w = max(0.5, room * point.value / peak)
        value = f"{point.value:,.0f}" if float(point.value).is_integer() else f"{point.value:,.2f}"
        drawing.add(String(label_w - 6, y + 2, clip(point.label, 40), fontName="DejaVu", fontSize=8,
                           textAnchor="end"))
        drawing.add(Rect(label_w, y, w, bar_h, fillColor=colors.HexColor("#3b6ea5"), strokeColor=None))
        drawing.add(String(label_w + w + 4, y + 2, value, fontName="DejaVu", fontSize=8))
    return drawing


def _table(report: ReportView, styles: dict[str, ParagraphStyle], width: float) -> LongTable:
    """The shortlist: the page's columns and each AI column's verdict; the header repeats on every page."""
    header, rows, id_column = report.shortlist()
    wide = {"title": 4.0, "conditions": 1.3, "interventions": 1.3, "sponsor": 1.3, "authors": 1.6, "journal": 1.3}
    weights = [1.4 if k == id_column else wide.get(h.lower(), 1.0) for k, h in enumerate(header)]
    unit = width / sum(weights)
    data: list[list[Paragraph]] = [[Paragraph(escape(h), styles["head"]) for h in header]]
    for i, row in enumerate(rows):
        cells = []
        for k, cell in enumerate(row):
            text = escape(clip(cell, 400))
            if k == id_column:
                text = f'<a href="{escape(report.table.links[i])}" color="#2f5f92">{text}</a>'
            cells.append(Paragraph(text, styles["cell"]))
        data.append(cells)
    table = LongTable(data, colWidths=[w * unit for w in weights], repeatRows=1)
    table.setStyle(TableStyle([
        ("GRID", (0, 0), (-1, -1), 0.4, colors.HexColor("#c9ced8")),
        ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#eef1f5")),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("TOPPADDING", (0, 0), (-1, -1), 2), ("BOTTOMPADDING", (0, 0), (-1, -1), 3),
    ]))
    return table


def to_pdf(report: ReportView) -> bytes:
    _fonts()
    styles = _styles()
    out = io.BytesIO()
    doc = SimpleDocTemplate(out, pagesize=landscape(A4), leftMargin=14 * mm, rightMargin=14 * mm,
                            topMargin=12 * mm, bottomMargin=14 * mm, title=report.title, author="Colleague")
    rows = len(report.table.rows)
    meta = (f"{escape(report.app)} shortlist · {rows} row{'' if rows == 1 else 's'} · built by Colleague on "
            f"{report.created_at}" + (f"<br/>Search: {escape(report.query)}" if report.query else ""))
    flow: list[Flowable] = [Paragraph(escape(report.title), styles["title"]), Paragraph(meta, styles["meta"])]
    if report.summary:
        flow += [Paragraph("Summary", styles["h2"]), *_markdown(report.summary, styles)]
    if report.charts:
        flow.append(Paragraph("Charts", styles["h2"]))
        for chart in report.charts:
            flow += [_chart(chart.chart, doc.width), Spacer(1, 6)]
    flow += [Paragraph("Shortlist", styles["h2"]), _table(report, styles, doc.width)]
    details = report.details()
    if details:
        flow.append(Paragraph("AI column reasoning", styles["h2"]))
        for item_id, title, answers in details:
            flow.append(Paragraph(escape(f"{item_id} — {clip(title, 200)}"), styles["h3"]))
            for name, verdict, reasoning, evidence in answers:
                text = f"<b>{escape(name)}: {escape(verdict or '—')}</b>. {escape(clip(reasoning, 2000))}"
                if evidence:
                    text += f' <font color="#5b6475">Evidence: {escape(clip(evidence, 1000))}</font>'
                flow.append(Paragraph(text, styles["small"]))
    flow.append(Paragraph("Sources", styles["h2"]))
    flow += [Paragraph(f'<a href="{escape(s.url)}" color="#2f5f92">{escape(s.label)}</a> {escape(s.url)}',
                       styles["small"]) for s in report.sources]

    def footer(canvas: Canvas, document: SimpleDocTemplate) -> None:
        canvas.saveState()
        canvas.setFont("DejaVu", 7.5)
        canvas.setFillColor(colors.HexColor("#6b7280"))
        canvas.drawCentredString(document.pagesize[0] / 2, 8 * mm,
                                 f"{clip(report.title, 100)} · page {document.page}")
        canvas.restoreState()

    doc.build(flow, onFirstPage=footer, onLaterPages=footer)
    return out.getvalue()
