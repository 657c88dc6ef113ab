"""A shortlist report: the selected rows with their AI columns, the pinned charts and the assistant's
summary, as a standalone HTML page and as a PDF.

The PDF is drawn with fpdf2 (pure Python, no browser or system libraries) in DejaVu Sans, shipped in
`fonts/`, so titles in any script print. Both renderings come from one `ReportView`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from fpdf import FPDF
from fpdf.fonts import FontFace
from markupsafe import Markup

from backend.exports.render import Source, bar_chart_svg, markdown_html, sources, templates
from backend.exports.schemas import ReportChart
from backend.exports.tables import Table

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
    base = len(table.header) - 3 * len(ai_columns)
    found = sources([summary or ""]) + [Source(i, link) for i, link in zip(table.ids, table.links, strict=True)]
    unique = list({s.url: s for s in found}.values())
    drawn = [ChartView(c, bar_chart_svg(c.title, c.points)) for c in charts]
    return ReportView(title, APP_LABELS.get(app, app), query, datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
                      summary, table, ai_columns, base, drawn, unique)


def to_html(report: ReportView) -> str:
    return templates().get_template("report.html.j2").render(r=report)


class _Pdf(FPDF):
    def __init__(self, title: str) -> None:
        super().__init__(orientation="landscape", format="A4")
        self.report_title = title
        self.add_font("DejaVu", "", str(FONTS / "DejaVuSans.ttf"))
        self.add_font("DejaVu", "B", str(FONTS / "DejaVuSans-Bold.ttf"))
        self.add_font("DejaVu", "I", str(FONTS / "DejaVuSans.ttf"))  # no italic face shipped: upright
        self.add_font("DejaVu", "BI", str(FONTS / "DejaVuSans-Bold.ttf"))
        self.set_font("DejaVu", size=10)
        self.set_auto_page_break(auto=True, margin=14)
        self.set_title(title)
        self.set_creator("Colleague")

    def footer(self) -> None:
        self.set_y(-10)
        self.set_font("DejaVu", size=8)
        self.set_text_color(110)
        self.cell(0, 5, f"{self.report_title} · page {self.page_no()}/{{nb}}", align="C")
        self.set_text_color(0)


def _heading(pdf: FPDF, text: str, size: int = 13) -> None:
    pdf.ln(3)
    pdf.set_font("DejaVu", "B", size)
    pdf.multi_cell(0, 7, text, new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("DejaVu", "", 10)


def _chart(pdf: FPDF, chart: ReportChart) -> None:
    _heading(pdf, chart.title, 11)
    peak = max(p.value for p in chart.points) or 1
    label_w, room, bar_h = 70, pdf.epw - 100, 5
    for point in chart.points:
        if pdf.will_page_break(bar_h + 1):
            pdf.add_page()
        y = pdf.get_y()
        pdf.set_font("DejaVu", "", 8)
        pdf.cell(label_w, bar_h, point.label[:48], align="R")
        pdf.set_fill_color(59, 110, 165)
        width = max(0.5, room * point.value / peak)
        pdf.rect(pdf.l_margin + label_w + 2, y + 0.5, width, bar_h - 1, style="F")
        pdf.set_xy(pdf.l_margin + label_w + 4 + width, y)
        pdf.cell(25, bar_h, f"{point.value:,.0f}" if float(point.value).is_integer() else f"{point.value:,.2f}")
        pdf.ln(bar_h + 1)
    pdf.set_font("DejaVu", "", 10)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _table(pdf: FPDF, report: ReportView) -> None:
    """The shortlist: the page's columns and each AI column's verdict (reasoning follows per row)."""
    header, rows, _ = report.shortlist()
    widths = [3 if h.lower() == "title" else 1 for h in header]
    pdf.set_font("DejaVu", "", 8)
    with pdf.table(col_widths=widths, text_align="LEFT", headings_style=FontFace(emphasis="BOLD", fill_color=235),
                   line_height=4.2, first_row_as_headings=True) as grid:
        grid.row(header)
        for row in rows:
            grid.row([_clip(cell, 400) for cell in row])
    pdf.set_font("DejaVu", "", 10)


def to_pdf(report: ReportView) -> bytes:
    pdf = _Pdf(report.title)
    pdf.add_page()
    pdf.set_font("DejaVu", "B", 18)
    pdf.multi_cell(0, 9, report.title, new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("DejaVu", "", 9)
    pdf.set_text_color(90)
    meta = f"{report.app} shortlist · {len(report.table.rows)} rows · built by Colleague on {report.created_at}"
    pdf.multi_cell(0, 5, meta + (f"\nSearch: {report.query}" if report.query else ""), new_x="LMARGIN", new_y="NEXT")
    pdf.set_text_color(0)
    pdf.set_font("DejaVu", "", 10)
    if report.summary:
        _heading(pdf, "Summary")
        try:
            pdf.write_html(str(markdown_html(report.summary)))
        except Exception:  # fpdf2's HTML subset: fall back to the plain text rather than fail the report
            pdf.multi_cell(0, 5, report.summary, new_x="LMARGIN", new_y="NEXT")
    for chart in report.charts:
        _chart(pdf, chart.chart)
    _heading(pdf, "Shortlist")
    _table(pdf, report)
    details = report.details()
    if details:
        _heading(pdf, "AI column reasoning")
        for item_id, title, answers in details:
            pdf.set_font("DejaVu", "B", 9)
            pdf.multi_cell(0, 5, f"{item_id} — {_clip(title, 200)}", new_x="LMARGIN", new_y="NEXT")
            pdf.set_font("DejaVu", "", 8)
            for name, verdict, reasoning, evidence in answers:
                text = f"{name}: {verdict or '—'}. {reasoning}" + (f" Evidence: {evidence}" if evidence else "")
                pdf.multi_cell(0, 4.2, _clip(text, 2000), new_x="LMARGIN", new_y="NEXT")
            pdf.ln(1)
    _heading(pdf, "Sources")
    pdf.set_font("DejaVu", "", 8)
    for source in report.sources:
        pdf.set_text_color(47, 95, 146)
        pdf.cell(0, 4.5, f"{source.label}  {source.url}", link=source.url, new_x="LMARGIN", new_y="NEXT")
    pdf.set_text_color(0)
    return bytes(pdf.output())
