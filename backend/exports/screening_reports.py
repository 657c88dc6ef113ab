"""A screening's reports for the doctor and the patient, stored and served like the shortlist reports:

    POST   /api/screenings/{id}/reports            build one from the stored results (201)
    GET    /api/screenings/{id}/reports            the screening's reports, newest first
    GET    /api/screening-reports/{id}/html | /pdf one report as built
    DELETE /api/screening-reports/{id}             delete one

Owner-only: another user's screening or report is a 404. Rendering is `screening_report.py`; the reads
are the screening desk's (`backend.screening.desk`), shared with the assistant's tools, which build
reports through `create` as the route does.
"""

from __future__ import annotations

from typing import Annotated, Literal

import anyio
from fastapi import APIRouter, Depends, Request, Response
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from backend.auth.deps import CurrentUser, ExportingUser
from backend.db.ids import DbId
from backend.db.models import ScreeningReport
from backend.errors import Conflict, NotFound, error_responses
from backend.exports import screening_report
from backend.exports.router import MAX_REPORT_BYTES, _file, _file_responses
from backend.routing import OneHopRoute
from backend.screening import store
from backend.screening.assist_schemas import ScreeningReportRead, ScreeningReportRequest
from backend.screening.desk import ScreeningDesk

router = APIRouter(tags=["screening"], responses=error_responses(401, 422), route_class=OneHopRoute)
OWNED = error_responses(404)


async def screening_desk(request: Request) -> ScreeningDesk:
    """The app's one `ScreeningDesk` (the chat's screening tools share it)."""
    return request.app.state.screening_desk


DeskDep = Annotated[ScreeningDesk, Depends(screening_desk)]


async def create(desk: ScreeningDesk, user_id: int, screening_id: int,
                 req: ScreeningReportRequest) -> ScreeningReportRead:
    """Build and store the report of the screening's trials (all, or `req.nct_ids`); 404 when it is not
    the user's, 409 when none of the trials were screened."""
    detail = await desk.screening(user_id, screening_id)
    trials = [t for t in detail.trials if not req.nct_ids or t.nct_id in req.nct_ids]
    if not trials:
        raise Conflict("This screening has no screened trials to report yet." if not req.nct_ids else
                       "None of those trials were screened in this screening.")
    patient = await desk.patient(user_id, detail.patient_id)
    records = await desk.records([t.nct_id for t in trials])
    title = req.title or f"Trial screening report: {patient.label}"
    view = screening_report.view(title, patient.label, detail, trials, records)
    html = await anyio.to_thread.run_sync(screening_report.to_html, view)
    pdf = await anyio.to_thread.run_sync(screening_report.to_pdf, view)
    if len(html.encode()) + len(pdf) > MAX_REPORT_BYTES:
        raise Conflict("This report would be too large; choose fewer trials.")

    def save(s: Session) -> ScreeningReportRead:
        store.owned_screening(s, user_id, screening_id)  # deleted meanwhile: a 404, nothing stored
        row = ScreeningReport(user_id=user_id, patient_id=detail.patient_id, screening_id=screening_id,
                              title=title[:255], trial_count=len(trials), html=html, pdf=pdf)
        s.add(row)
        s.flush()
        return _read(row)

    return await desk.run(save)


@router.post("/api/screenings/{screening_id}/reports", status_code=201, responses=error_responses(404, 409, 429))
async def create_report(screening_id: DbId, body: ScreeningReportRequest, user: ExportingUser,
                        desk: DeskDep) -> ScreeningReportRead:
    """The report for the doctor and the patient, from the screening's stored results (all its trials, or
    `nct_ids`): the profile, the ranked shortlist, the deciding criteria with their evidence, sites, a
    glossary, questions for the doctor and the disclaimer. 409 when none of the trials were screened."""
    return await create(desk, user.id, screening_id, body)


@router.get("/api/screenings/{screening_id}/reports", responses=OWNED)
async def list_reports(screening_id: DbId, user: CurrentUser, desk: DeskDep) -> list[ScreeningReportRead]:
    """The screening's reports, newest first."""
    def read(s: Session) -> list[ScreeningReportRead]:
        store.owned_screening(s, user.id, screening_id)
        return [_read(r) for r in s.scalars(select(ScreeningReport).where(
            ScreeningReport.screening_id == screening_id).order_by(ScreeningReport.id.desc()).limit(100))]

    return await desk.run(read)


async def _file_of(desk: ScreeningDesk, user_id: int, report_id: int, kind: Literal["html", "pdf"],
                   download: bool) -> Response:
    def read(s: Session) -> tuple[str | bytes, str]:
        row = _owned(s, user_id, report_id)
        return (row.html if kind == "html" else row.pdf), row.title

    body, title = await desk.run(read)
    return _file(body, kind, title, inline=not download)


@router.get("/api/screening-reports/{report_id}/html", response_class=Response,
            responses={**_file_responses("html"), **OWNED})
async def report_html(report_id: DbId, user: CurrentUser, desk: DeskDep, download: bool = False) -> Response:
    return await _file_of(desk, user.id, report_id, "html", download)


@router.get("/api/screening-reports/{report_id}/pdf", response_class=Response,
            responses={**_file_responses("pdf"), **OWNED})
async def report_pdf(report_id: DbId, user: CurrentUser, desk: DeskDep, download: bool = False) -> Response:
    return await _file_of(desk, user.id, report_id, "pdf", download)


@router.delete("/api/screening-reports/{report_id}", status_code=204, response_class=Response, responses=OWNED)
async def delete_report(report_id: DbId, user: CurrentUser, desk: DeskDep) -> Response:
    """Delete one report (its HTML and PDF)."""
    def drop(s: Session) -> None:
        _owned(s, user.id, report_id)
        s.execute(delete(ScreeningReport).where(ScreeningReport.id == report_id))

    await desk.run(drop)
    return Response(status_code=204)


def _owned(s: Session, user_id: int, report_id: int) -> ScreeningReport:
    row = s.get(ScreeningReport, report_id)
    if row is None or row.user_id != user_id:
        raise NotFound(f"Report {report_id} not found.")
    return row


def _read(r: ScreeningReport) -> ScreeningReportRead:
    base = f"/api/screening-reports/{r.id}"
    return ScreeningReportRead(id=r.id, screening_id=r.screening_id, patient_id=r.patient_id, title=r.title,
                               trial_count=r.trial_count, html_url=f"{base}/html", pdf_url=f"{base}/pdf",
                               created_at=r.created_at)
