"""A results table as rows of text, and its CSV and XLSX files.

`build_table` joins what the page showed with the user's stored AI column results: each AI column becomes
three columns (the verdict or answer, the reasoning, the evidence). Every cell, the header row included, is
inert: in the XLSX each is typed as text, in the CSV one a spreadsheet would run as a formula (`=`, `+`,
`-`, `@` first) gets a leading apostrophe, so a hostile title, column label or stored verdict cannot
execute or call out on open. Control characters other than tab and line breaks are dropped (the XLSX
format cannot hold them) and a cell holds at most Excel's 32,767 characters. The XLSX is written in
openpyxl's write-only mode: rows stream to the file, so time and memory grow linearly with the table.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.styles import Alignment, Font
from openpyxl.utils import get_column_letter
from openpyxl.worksheet._write_only import WriteOnlyWorksheet
from sqlalchemy.orm import Session

from backend.ai_columns.schemas import ID_KEY
from backend.ai_columns.service import StoredResult, stored_results
from backend.exports.schemas import TableRequest, text_of
from backend.sources.models import normalize_nct_id, normalize_pmid
from backend.text import clip, looks_like_formula

CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
MAX_XLSX_CELL = 32_767
TOP, WRAPPED, BOLD = Alignment(vertical="top"), Alignment(vertical="top", wrap_text=True), Font(bold=True)


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]
    ids: list[str]  # each row's normalized id
    links: list[str]  # each row's page on PubMed / ClinicalTrials.gov
    id_column: int | None  # the column showing the id, linked to that page in the XLSX


def record_link(app: str, item_id: str) -> str:
    if app == "trialscout":
        return f"https://clinicaltrials.gov/study/{item_id}"
    return f"https://pubmed.ncbi.nlm.nih.gov/{item_id}/"


def _normalized(app: str, raw: str) -> str:
    try:
        return normalize_nct_id(raw) if app == "trialscout" else normalize_pmid(raw)
    except ValueError:
        return raw.strip()


def build_table(s: Session, user_id: int, req: TableRequest) -> Table:
    key = ID_KEY[req.app]
    ids = [_normalized(req.app, text_of(row.get(key))) for row in req.rows]
    results: list[dict[str, StoredResult]] = [stored_results(s, user_id, req.app, c, ids) for c in req.ai_columns]
    header = [c.label for c in req.columns]
    for column in req.ai_columns:
        header += [column.name, f"{column.name}: reasoning", f"{column.name}: evidence"]
    rows = []
    for row, item_id in zip(req.rows, ids, strict=True):
        cells = [text_of(row.get(c.key)) for c in req.columns]
        for found in results:
            result = found.get(item_id)
            cells += [result.display, result.reasoning, " | ".join(result.evidence)] if result else ["", "", ""]
        rows.append(cells)
    id_column = next((i for i, c in enumerate(req.columns) if c.key == key), None)
    return Table(header, rows, ids, [record_link(req.app, i) for i in ids], id_column)


def clean(cell: str) -> str:
    """Without control characters (tab and line breaks kept), at most a spreadsheet cell's length."""
    return clip(CONTROL.sub("", cell), MAX_XLSX_CELL - 1)


def _safe(cell: str) -> str:
    cell = clean(cell)
    return "'" + cell if looks_like_formula(cell) else cell


def to_csv(table: Table) -> bytes:
    """UTF-8 with a byte-order mark, which is how Excel recognises UTF-8 in a CSV."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([_safe(h) for h in table.header])
    writer.writerows([_safe(c) for c in row] for row in table.rows)
    return ("\ufeff" + out.getvalue()).encode("utf-8")


def _text_cell(ws: WriteOnlyWorksheet, value: str, *, bold: bool = False, link: str | None = None) -> WriteOnlyCell:
    cell = WriteOnlyCell(ws, value=clean(value))
    cell.data_type = "s"  # text, never a formula (openpyxl would make "=…" one)
    if link:
        cell.hyperlink = link
        cell.style = "Hyperlink"
    if bold:
        cell.font = BOLD
    cell.alignment = WRAPPED if len(cell.value or "") > 60 else TOP
    return cell


def to_xlsx(table: Table, sheet: str) -> bytes:
    wb = Workbook(write_only=True)
    ws = wb.create_sheet(sheet[:31])
    ws.freeze_panes = "A2"
    for i, title in enumerate(table.header, start=1):  # widths first: a write-only sheet writes them ahead of rows
        longest = max([len(title)] + [len(r[i - 1]) for r in table.rows[:200]])
        ws.column_dimensions[get_column_letter(i)].width = min(60, max(10, longest + 2))
    ws.append([_text_cell(ws, title, bold=True) for title in table.header])
    for row, link in zip(table.rows, table.links, strict=True):
        ws.append([_text_cell(ws, value, link=link if i == table.id_column else None) for i, value in enumerate(row)])
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()
