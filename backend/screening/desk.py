"""What the assistant and the report read of a user's stored screenings: the owner's patient and
screening (anything else is a 404, as on the API), and the trial records behind them.

Never HTTP, SSE or the model; database work runs in short sessions in threads. The chat's tools reach
it through `ToolContext.screenings`, the report routes (`backend/exports/screening_reports.py`) through
the app's state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from sqlalchemy.orm import Session

from backend.db.session import Database
from backend.screening import store
from backend.screening.runner import in_session
from backend.screening.schemas import PatientDetail, ScreeningDetail
from backend.sources import Sources, TrialDetail

T = TypeVar("T")
MAX_REPORT_BYTES = 20_000_000  # as a shortlist report (backend/exports/router.py)


class ScreeningDesk:
    def __init__(self, db: Database, sources: Sources | None) -> None:
        self.db = db
        self.sources = sources

    async def run(self, work: Callable[[Session], T]) -> T:
        """`work` in one short session, in a thread."""
        return await in_session(self.db, work)

    async def patient(self, user_id: int, patient_id: int) -> PatientDetail:
        return await self.run(lambda s: store.patient_detail(s, store.owned_patient(s, user_id, patient_id)))

    async def screening(self, user_id: int, screening_id: int) -> ScreeningDetail:
        return await self.run(lambda s: store.screening_detail(s, store.owned_screening(s, user_id, screening_id)))

    async def latest_screening(self, user_id: int, patient_id: int) -> ScreeningDetail | None:
        def read(s: Session) -> ScreeningDetail | None:
            screenings = store.list_screenings(s, store.owned_patient(s, user_id, patient_id), limit=1)
            return store.screening_detail(s, store.owned_screening(s, user_id, screenings[0].id)) \
                if screenings else None

        return await self.run(read)

    async def records(self, nct_ids: Sequence[str]) -> list[TrialDetail]:
        """The trials' records (locations, status) from the app's source; [] when it can't answer: a
        report or an answer without sites is still one."""
        if self.sources is None or not nct_ids:
            return []
        try:
            return await self.sources.trials.get_trials_by_nct_ids(list(nct_ids))
        except Exception:
            return []
