"""What the assistant and the report read and build from a user's stored screenings: the owner's
patient and screening (anything else is a 404, as on the API), the trial records behind them, and the
screening's reports (built, stored, served, deleted).

Never HTTP, SSE or the model; database work runs in short sessions in threads. The chat's tools reach
it through `ToolContext.screenings`, the report routes through the app's state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, TypeVar

import anyio
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from backend.db.models import ScreeningReport
from backend.db.session import Database
from backend.errors import Conflict, NotFound
from backend.screening import report, store
from backend.screening.assist_schemas import ScreeningReportRead, ScreeningReportRequest
from backend.screening.runner import in_session
from backend.screening.schemas import PatientDetail, ScreeningDetail
from backend.sources import Sources, TrialDetail

T = TypeVar("T")
MAX_REPORT_BYTES = 20_000_000  # as a shortlist report (backend/exports/router.py)


class ScreeningDesk:
    def __init__(self, db: Database, sources: Sources | None) -> None:
        self.db = db
        self.sources = sources

    async def _db(self, work: Callable[[Session], T]) -> T:
        return await in_session(self.db, work)

    async def patient(self, user_id: int, patient_id: int) -> PatientDetail:
        return await self._db(lambda s: store.patient_detail(s, store.owned_patient(s, user_id, patient_id)))

    async def screening(self, user_id: int, screening_id: int) -> ScreeningDetail:
        return await self._db(lambda s: store.screening_detail(s, store.owned_screening(s, user_id, screening_id)))

    async def latest_screening(self, user_id: int, patient_id: int) -> ScreeningDetail | None:
        def read(s: Session) -> ScreeningDetail | None:
            screenings = store.list_screenings(s, store.owned_patient(s, user_id, patient_id), limit=1)
            return store.screening_detail(s, store.owned_screening(s, user_id, screenings[0].id)) \
                if screenings else None

        return await self._db(read)

    async def records(self, nct_ids: Sequence[str]) -> list[TrialDetail]:
        """The trials' records (locations, status) from the app's source; [] when it can't answer: a
        report or an answer without sites is still one."""
        if self.sources is None or not nct_ids:
            return []
        try:
            return await self.sources.trials.get_trials_by_nct_ids(list(nct_ids))
        except Exception:
            return []

    # -- reports -------------------------------------------------------------------------------------
    async def create_report(self, user_id: int, screening_id: int, req: ScreeningReportRequest) -> ScreeningReportRead:
        detail = await self.screening(user_id, screening_id)
        trials = [t for t in detail.trials if not req.nct_ids or t.nct_id in req.nct_ids]
        if not trials:
            raise Conflict("This screening has no screened trials to report yet." if not req.nct_ids else
                           "None of those trials were screened in this screening.")
        patient = await self.patient(user_id, detail.patient_id)
        records = await self.records([t.nct_id for t in trials])
        title = req.title or f"Trial screening report: {patient.label}"
        view = report.view(title, patient.label, detail, trials, records)
        html = await anyio.to_thread.run_sync(report.to_html, view)
        pdf = await anyio.to_thread.run_sync(report.to_pdf, view)
        if len(html.encode()) + len(pdf) > MAX_REPORT_BYTES:
            raise Conflict("This report would be too large; choose fewer trials.")

        def save(s: Session) -> ScreeningReportRead:
            store.owned_screening(s, user_id, screening_id)  # deleted meanwhile: a 404, nothing stored
            row = ScreeningReport(user_id=user_id, patient_id=detail.patient_id, screening_id=screening_id,
                                  title=title[:255], trial_count=len(trials), html=html, pdf=pdf)
            s.add(row)
            s.flush()
            return _read(row)

        return await self._db(save)

    async def list_reports(self, user_id: int, screening_id: int) -> list[ScreeningReportRead]:
        def read(s: Session) -> list[ScreeningReportRead]:
            store.owned_screening(s, user_id, screening_id)
            return [_read(r) for r in s.scalars(select(ScreeningReport).where(
                ScreeningReport.screening_id == screening_id).order_by(ScreeningReport.id.desc()).limit(100))]

        return await self._db(read)

    async def report_file(self, user_id: int, report_id: int, kind: Literal["html", "pdf"]) -> tuple[str | bytes, str]:
        def read(s: Session) -> tuple[str | bytes, str]:
            row = _owned_report(s, user_id, report_id)
            return (row.html if kind == "html" else row.pdf), row.title

        return await self._db(read)

    async def delete_report(self, user_id: int, report_id: int) -> None:
        def drop(s: Session) -> None:
            _owned_report(s, user_id, report_id)
            s.execute(delete(ScreeningReport).where(ScreeningReport.id == report_id))

        await self._db(drop)


def _owned_report(s: Session, user_id: int, report_id: int) -> ScreeningReport:
    row = s.get(ScreeningReport, report_id)
    if row is None or row.user_id != user_id:
        raise NotFound(f"Report {report_id} not found.")
    return row


def _read(r: ScreeningReport) -> ScreeningReportRead:
    base = f"/api/screening-reports/{r.id}"
    return ScreeningReportRead(id=r.id, screening_id=r.screening_id, patient_id=r.patient_id, title=r.title,
                               trial_count=r.trial_count, html_url=f"{base}/html", pdf_url=f"{base}/pdf",
                               created_at=r.created_at)
