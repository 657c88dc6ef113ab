"""Exports and reports, each scoped to its owner (another user's conversation or report is a 404).

    POST /api/exports/table?format=csv|xlsx          the results table as shown, with AI columns
    GET  /api/conversations/{id}/export?format=…     a conversation as Markdown or standalone HTML
    POST /api/reports                                build a shortlist report (SSE: report_progress…, report_ready)
    GET  /api/reports                                the user's reports, newest first
    GET  /api/reports/{id}/html | /pdf               one report
    DELETE /api/reports/{id}                         delete one report

Building any of them counts against the user's exports a minute (429 beyond); a stored report is capped
in size (`MAX_REPORT_BYTES`, its HTML and PDF together): a larger one fails its build with a clear error.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Annotated, Literal
from urllib.parse import quote

import anyio
from fastapi import APIRouter, Response
from pydantic import Field
from sqlalchemy import delete, select
from sse_starlette import EventSourceResponse

from backend.auth.deps import CurrentUser, ExportingUser
from backend.chat.sse import events_response
from backend.conversations.service import get_owned
from backend.db.ids import DbId
from backend.db.models import Conversation, Message, Report
from backend.db.session import Database
from backend.deps import DbDep
from backend.errors import NotFound, error_responses
from backend.exports import conversation, report, tables
from backend.exports.schemas import (
    ReportEvent,
    ReportFailed,
    ReportProgress,
    ReportRead,
    ReportReady,
    ReportRequest,
    TableRequest,
)
from backend.openapi import event_stream
from backend.routing import OneHopRoute

log = logging.getLogger(__name__)
router = APIRouter(tags=["exports"], responses=error_responses(401, 422), route_class=OneHopRoute)
BUILT = error_responses(429)  # over the user's exports a minute
OWNED = error_responses(404)
MEDIA = {"csv": "text/csv; charset=utf-8",
         "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
         "markdown": "text/markdown; charset=utf-8", "html": "text/html; charset=utf-8",
         "pdf": "application/pdf"}
SUFFIX = {"csv": "csv", "xlsx": "xlsx", "markdown": "md", "html": "html", "pdf": "pdf"}
# A downloaded report or conversation opened from the app: its own inline styles, nothing that runs or loads.
DOCUMENT_POLICY = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
                   "form-action 'none'; frame-ancestors 'none'; sandbox allow-popups allow-popups-to-escape-sandbox")


MAX_REPORT_BYTES = 20_000_000


def _slug(text: str) -> str:
    cleaned = "".join(ch if ch.isalnum() else "-" for ch in text.lower()).strip("-")
    return "-".join(part for part in cleaned.split("-") if part)[:60] or "export"


def disposition(kind: str, name: str, inline: bool = False) -> str:
    """RFC 6266: the UTF-8 name as `filename*`, and an ASCII one for clients that only read `filename`
    (a header is Latin-1: a title in another script as `filename` was a 500)."""
    slug, suffix = _slug(name), SUFFIX[kind]
    ascii_slug = _slug(slug.encode("ascii", "ignore").decode())
    return (f'{"inline" if inline else "attachment"}; filename="{ascii_slug}.{suffix}"; '
            f"filename*=UTF-8''{quote(f'{slug}.{suffix}', safe='')}")


def _file(body: bytes | str, kind: str, name: str, inline: bool = False) -> Response:
    headers = {"Content-Disposition": disposition(kind, name, inline), "Cache-Control": "private, no-store"}
    if kind in ("html", "markdown"):
        headers["Content-Security-Policy"] = DOCUMENT_POLICY
    return Response(body, media_type=MEDIA[kind], headers=headers)


def _file_responses(*kinds: str) -> dict[int | str, dict[str, object]]:
    return {200: {"description": "The file", "content": {MEDIA[k]: {} for k in kinds}}}


@router.post("/api/exports/table", response_class=Response, responses={**_file_responses("csv", "xlsx"), **BUILT})
def export_table(body: TableRequest, user: ExportingUser, db: DbDep,
                 format: Literal["csv", "xlsx"] = "csv") -> Response:
    """The table as the page shows it (its columns and rows in order), each AI column as verdict,
    reasoning and evidence from the user's own stored results."""
    with db.session() as s:
        table = tables.build_table(s, user.id, body)
    name = f"{body.app}-results-{datetime.now(UTC):%Y-%m-%d}"
    data = tables.to_csv(table) if format == "csv" else tables.to_xlsx(table, "Results")
    return _file(data, format, name)


@router.get("/api/conversations/{conversation_id}/export", response_class=Response,
            responses={**_file_responses("markdown", "html"), **OWNED, **BUILT}, tags=["conversations"])
def export_conversation(conversation_id: DbId, user: ExportingUser, db: DbDep,
                        format: Literal["markdown", "html"] = "markdown") -> Response:
    with db.session() as s:
        export = conversation.load(s, user.id, conversation_id)
    body = conversation.to_markdown(export) if format == "markdown" else conversation.to_html(export)
    return _file(body, format, export.title)


def _summary_of(db: Database, user_id: int, req: ReportRequest) -> str | None:
    """The given summary, or the newest complete answer of the conversation (the named one, else the
    user's most recent on this app)."""
    if req.summary is not None or not req.include_answer:
        return req.summary
    answers = (select(Message.content).join(Conversation, Conversation.id == Message.conversation_id)
               .where(Conversation.user_id == user_id, Message.role == "assistant", Message.status == "complete"))
    with db.session() as s:
        if req.conversation_id is not None:
            get_owned(s, user_id, req.conversation_id)
            answers = answers.where(Conversation.id == req.conversation_id)
        else:
            answers = answers.where(Conversation.app == req.app)
        text = s.scalar(answers.order_by(Message.id.desc()).limit(1))
    return text or None


def _read(r: Report) -> ReportRead:
    return ReportRead(id=r.id, app=r.app, title=r.title, row_count=r.row_count,
                      html_url=f"/api/reports/{r.id}/html", pdf_url=f"/api/reports/{r.id}/pdf")


async def build_report(db: Database, user_id: int, req: ReportRequest) -> AsyncIterator[ReportEvent]:
    total = 4
    try:
        yield ReportProgress(step="Gathering the shortlist and its AI column results", done=0, total=total)
        summary = await anyio.to_thread.run_sync(_summary_of, db, user_id, req)

        def table() -> tables.Table:
            with db.session() as s:
                return tables.build_table(s, user_id, req)

        view = report.view(req.title, req.app, req.query, summary, await anyio.to_thread.run_sync(table),
                           [c.name for c in req.ai_columns], req.charts)
        yield ReportProgress(step="Writing the HTML report", done=1, total=total)
        html = await anyio.to_thread.run_sync(report.to_html, view)
        yield ReportProgress(step="Drawing the PDF", done=2, total=total)
        pdf = await anyio.to_thread.run_sync(report.to_pdf, view)
        yield ReportProgress(step="Saving", done=3, total=total)
        size = len(html.encode()) + len(pdf)
        if size > MAX_REPORT_BYTES:
            yield ReportFailed(message=f"This report would take {size / 1e6:.1f} MB, over the "
                               f"{MAX_REPORT_BYTES / 1e6:.0f} MB a report may; select fewer rows or AI columns.",
                               code="too_large", retryable=False)
            return

        def save() -> ReportRead:
            with db.session() as s:
                row = Report(user_id=user_id, app=req.app, title=req.title, row_count=len(req.rows),
                             html=html, pdf=pdf)
                s.add(row)
                s.flush()
                return _read(row)

        saved = await anyio.to_thread.run_sync(save)
        yield ReportProgress(step="Done", done=total, total=total)
        yield ReportReady(report=saved)
    except NotFound as exc:
        yield ReportFailed(message=exc.detail, code="not_found", retryable=False)
    except Exception as exc:  # the stream still ends with an event, never a cut-off body
        log.exception("building a report failed")
        yield ReportFailed(message=f"The report could not be built: {type(exc).__name__}.", code="internal_error",
                           retryable=True)


@router.post("/api/reports", response_class=EventSourceResponse, tags=["reports"],
             responses={200: event_stream(Annotated[ReportEvent, Field(discriminator="type")],
                                           "The build's progress, then `report_ready` (or `error`)"), **BUILT})
async def create_report(body: ReportRequest, user: ExportingUser, db: DbDep) -> EventSourceResponse:
    """Build a shortlist report: `report_progress` while it builds, then `report_ready` with its links."""
    return events_response(build_report(db, user.id, body))


@router.get("/api/reports", tags=["reports"])
def list_reports(user: CurrentUser, db: DbDep) -> list[ReportRead]:
    with db.session() as s:
        rows = s.scalars(select(Report).where(Report.user_id == user.id).order_by(Report.id.desc()).limit(100))
        return [_read(r) for r in rows]


def _owned(db: Database, user_id: int, report_id: int) -> Report:
    with db.session() as s:
        row = s.get(Report, report_id)
        if row is None or row.user_id != user_id:
            raise NotFound(f"Report {report_id} not found.")
        s.expunge(row)
        return row


@router.get("/api/reports/{report_id}/html", response_class=Response, tags=["reports"],
            responses={**_file_responses("html"), **OWNED})
def report_html(report_id: DbId, user: CurrentUser, db: DbDep, download: bool = False) -> Response:
    row = _owned(db, user.id, report_id)
    return _file(row.html, "html", row.title, inline=not download)


@router.get("/api/reports/{report_id}/pdf", response_class=Response, tags=["reports"],
            responses={**_file_responses("pdf"), **OWNED})
def report_pdf(report_id: DbId, user: CurrentUser, db: DbDep, download: bool = False) -> Response:
    row = _owned(db, user.id, report_id)
    return _file(row.pdf, "pdf", row.title, inline=not download)


@router.delete("/api/reports/{report_id}", status_code=204, response_class=Response, tags=["reports"],
               responses=OWNED)
def delete_report(report_id: DbId, user: CurrentUser, db: DbDep) -> Response:
    """Delete one of your reports (its HTML and PDF); another user's is a 404."""
    with db.session() as s:
        gone = s.execute(delete(Report).where(Report.id == report_id, Report.user_id == user.id))
        if gone.rowcount != 1:  # type: ignore[attr-defined]
            raise NotFound(f"Report {report_id} not found.")
    return Response(status_code=204)
