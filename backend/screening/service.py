"""Patients and screenings for the API: profile extraction on create and edit, the lifecycle of a
screening (start, read, follow, stop, delete) and this worker's running screenings.

Knows the engine (`extract_profile`, `screen`), the store and the quotas; never HTTP or SSE. Database work
runs in short sessions in threads; none is open while the engine runs. A screening runs in tasks of this
worker (`runner.py`), so the request that started it is only its first reader; `follow` attaches again,
from the log in memory on this worker or from the stored rows on any other.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import anyio
from sqlalchemy.orm import Session

from backend.agent.errors import API_ERRORS
from backend.agent.llm import LLM
from backend.chat.log import Closing, Frame, TurnLog
from backend.chat.workers import WorkerPresence
from backend.conversations.forget import forget_patient
from backend.db.base import utcnow
from backend.db.models.screening import Patient
from backend.db.session import Database
from backend.errors import NotFound
from backend.quotas import Quotas, record_usage
from backend.screening import extract_profile, screen, store
from backend.screening.cache import DatabaseJudgementCache
from backend.screening.models import PatientInput, PatientProfile, ScreenRequest, Usage
from backend.screening.runner import Run, in_session, record
from backend.screening.schemas import (
    PatientCreate,
    PatientDetail,
    PatientRead,
    PatientUpdate,
    ScreeningDetail,
    ScreeningRead,
)
from backend.screening.store import StopReason
from backend.sources import Sources

log = logging.getLogger(__name__)
T = TypeVar("T")
STOP_WAIT_SECONDS = 10.0  # Stop waits this long for the screening's end to be saved before it answers


class ScreeningService:
    def __init__(self, db: Database, llm: LLM, sources: Sources, quotas: Quotas, presence: WorkerPresence,
                 concurrency: int = 8) -> None:
        self.db = db
        self.llm = llm
        self.sources = sources
        self.quotas = quotas
        self.presence = presence  # the chat's: one liveness lock per worker
        self.concurrency = concurrency
        self.runs: dict[int, Run] = {}  # this worker's running screenings, by id
        self.poll_seconds = 1.0  # the watcher: leases renewed, Stop asked on another worker seen
        self.read_poll_seconds = 0.5  # a reader of another worker's screening looks for new rows
        self.closing = False
        self._watcher: asyncio.Task[None] | None = None

    async def _db(self, work: Callable[[Session], T]) -> T:
        return await in_session(self.db, work)

    # -- patients ------------------------------------------------------------------------------------
    async def create_patient(self, user_id: int, body: PatientCreate) -> PatientDetail:
        await anyio.to_thread.run_sync(self.quotas.check_budget, user_id)
        profile = await self._extract(user_id, body.note)
        return await self._db(lambda s: store.create_patient(s, user_id, body.label, body.note, profile))

    async def update_patient(self, user_id: int, patient_id: int, body: PatientUpdate) -> PatientDetail:
        def current(s: Session) -> tuple[str, dict[str, Any]]:
            version = store.current_version(s, store.owned_patient(s, user_id, patient_id).id)
            if body.note is not None and body.profile is None:
                self.quotas.check_budget(user_id)
            return version.note, version.profile

        note, profile_data = await self._db(current)
        new_note = body.note if body.note is not None else note
        profile = body.profile
        if profile is None and body.note is not None and body.note != note:
            profile = await self._extract(user_id, body.note)
        changed = new_note != note or (profile is not None and profile.model_dump(mode="json") != profile_data)

        def save(s: Session) -> PatientDetail:
            patient = store.owned_patient(s, user_id, patient_id)
            if changed:
                store.add_version(s, patient, new_note, profile or PatientProfile.model_validate(profile_data),
                                  edited=body.profile is not None)
            if body.label:
                patient.label = body.label
            if changed or body.label:
                patient.updated_at = utcnow()
            s.flush()
            return store.patient_detail(s, patient)

        return await self._db(save)

    async def _extract(self, user_id: int, note: str) -> PatientProfile:
        """INGEST with the app's model; its tokens count in the user's day. A model that can't be reached
        leaves the local rules' profile (the user can edit it)."""
        try:
            profile, usage = await extract_profile(note, self.llm.client, self.llm.model)
        except API_ERRORS as exc:
            log.warning("profile extraction fell back to the local rules (%s)", type(exc).__name__)
            profile, usage = await extract_profile(note)
        await self._db(lambda s: record_usage(s, user_id, _token_counts(usage), turns=0))
        return profile

    async def list_patients(self, user_id: int) -> list[PatientRead]:
        return await self._db(lambda s: store.list_patients(s, user_id))

    async def patient(self, user_id: int, patient_id: int) -> PatientDetail:
        return await self._db(lambda s: store.patient_detail(s, store.owned_patient(s, user_id, patient_id)))

    async def delete_patient(self, user_id: int, patient_id: int) -> None:
        """The patient and everything derived from it, the chat's turns about it included, in one
        transaction; its running screening is stopped first."""
        await self._db(lambda s: store.owned_patient(s, user_id, patient_id))
        for run in [r for r in self.runs.values() if r.patient_id == patient_id]:
            await self._halt(run, "deleted")
        await self._db(lambda s: forget(s, user_id, store.owned_patient(s, user_id, patient_id)))

    # -- screenings ----------------------------------------------------------------------------------
    async def start(self, user_id: int, patient_id: int, request: ScreenRequest) -> tuple[int, AsyncIterator[Frame]]:
        """Begin a screening of the patient's current version (404, 409 while one runs, 429 over a quota)
        and return its id and its first reader."""
        def begin() -> tuple[Run, PatientInput]:  # (sessions one after another: SQLite has one writer)
            with self.db.session() as s:
                store.owned_patient(s, user_id, patient_id)
            self.quotas.admit_screening(user_id)
            with self.db.session() as s:
                patient = store.owned_patient(s, user_id, patient_id)
                screening, version = store.begin(s, user_id, patient, request.mode, request.nct_ids, request.n,
                                                 self.llm.model, self._worker_id(), self.presence.dead)
                run = Run(screening.id, patient.id, user_id, version.id, self.llm.model,
                          TurnLog(str(screening.id)))
                profile = PatientProfile.model_validate(version.profile)
                return run, PatientInput(note=version.note, profile=profile, version=str(version.id))

        run, patient_input = await anyio.to_thread.run_sync(begin)
        cache = DatabaseJudgementCache(self.db, run.version_id)
        events = screen(patient_input, request, self.sources.trials, self.llm.client, self.llm.model, cache,
                        concurrency=self.concurrency)
        self.runs[run.screening_id] = run
        run.task = asyncio.create_task(self._run(run, events), name=f"screening-run-{run.screening_id}")
        self._ensure_watcher()
        return run.screening_id, run.log.follow(0)

    async def _run(self, run: Run, events: AsyncIterator[Any]) -> None:
        try:
            await record(self.db, run, events)
        finally:
            self.runs.pop(run.screening_id, None)

    def _worker_id(self) -> str | None:
        return self.presence.id if self.presence.held else None

    async def screening(self, user_id: int, screening_id: int) -> ScreeningDetail:
        def read(s: Session) -> ScreeningDetail:
            screening = store.owned_screening(s, user_id, screening_id)
            if screening.status == "running" and screening_id not in self.runs:
                store.settle(s, store.owned_patient(s, user_id, screening.patient_id), self.presence.dead)
            return store.screening_detail(s, screening)

        return await self._db(read)

    async def list_screenings(self, user_id: int, patient_id: int) -> list[ScreeningRead]:
        return await self._db(lambda s: store.list_screenings(s, store.owned_patient(s, user_id, patient_id)))

    async def follow(self, user_id: int, screening_id: int, after: int) -> AsyncIterator[Frame]:
        """The screening's events after `after`, then live ones until its terminal event."""
        await self._db(lambda s: store.owned_screening(s, user_id, screening_id))
        run = self.runs.get(screening_id)
        if run is not None:
            return run.log.follow(after)
        return self._follow_stored(user_id, screening_id, after)

    async def _follow_stored(self, user_id: int, screening_id: int, after: int) -> AsyncIterator[Frame]:
        """A screening that ran or runs elsewhere, through its rows; one whose worker is gone gets its
        terminal event when its lease lapses (`store.settle`), so a reader never waits forever."""
        def read(s: Session, *, n: int) -> tuple[list[Frame], bool]:
            screening = store.owned_screening(s, user_id, screening_id)
            if screening.status == "running":
                store.settle(s, store.owned_patient(s, user_id, screening.patient_id), self.presence.dead)
            return store.stored_frames(s, screening_id, n), screening.status == "running"

        n = after
        while True:
            try:
                frames, running = await self._db(functools.partial(read, n=n))
            except NotFound:  # deleted while followed
                return
            for frame in frames:
                n = frame.id
                yield frame
                if frame.terminal:
                    return
            if not running and not frames:
                return
            if self.closing:
                raise Closing
            await asyncio.sleep(self.read_poll_seconds)

    async def stop(self, user_id: int, screening_id: int) -> bool:
        """Stop a running screening (the trials screened so far are kept). False when none was running."""
        await self._db(lambda s: store.owned_screening(s, user_id, screening_id))
        run = self.runs.get(screening_id)
        if run is not None:
            await self._halt(run, "stopped")
            return True
        return await self._db(lambda s: store.request_stop(s, store.owned_screening(s, user_id, screening_id)))

    async def delete_screening(self, user_id: int, screening_id: int) -> None:
        await self._db(lambda s: store.owned_screening(s, user_id, screening_id))
        if (run := self.runs.get(screening_id)) is not None:
            await self._halt(run, "deleted")
        await self._db(lambda s: store.delete_screening(s, store.owned_screening(s, user_id, screening_id)))

    async def _halt(self, run: Run, reason: StopReason) -> None:
        run.stop(reason)
        if run.task is not None:
            await asyncio.wait([run.task], timeout=STOP_WAIT_SECONDS)

    # -- this worker's runs --------------------------------------------------------------------------
    def _ensure_watcher(self) -> None:
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.create_task(self._watch(), name="screening-watcher")

    async def _watch(self) -> None:
        """Renew the leases of this worker's screenings, and stop those asked to stop (or deleted) on
        another worker: one query for all, every `poll_seconds`, while any runs."""
        while self.runs:
            await asyncio.sleep(self.poll_seconds)
            ids = list(self.runs)
            try:
                found = await self._db(functools.partial(store.renew, screening_ids=ids))
            except Exception:
                log.warning("renewing the screening leases failed; trying again", exc_info=True)
                continue
            for sid, reason in found.items():
                run = self.runs.get(sid)
                if run is not None and reason is not None:
                    run.stop(reason)

    def close_readers(self) -> None:
        """The server is going down: readers end with a frame asking their client to resume elsewhere."""
        if self.closing:
            return
        self.closing = True
        for run in list(self.runs.values()):
            run.log.close()

    async def shutdown(self, timeout: float = 3.0) -> None:
        """Stop every running screening; each saves what it has, marked interrupted, within `timeout`."""
        self.close_readers()
        tasks = [r.task for r in self.runs.values() if r.task is not None]
        for run in list(self.runs.values()):
            run.stop("shutdown")
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)
        if self._watcher is not None:
            self._watcher.cancel()


def forget(s: Session, user_id: int, patient: Patient) -> None:
    """The patient's rows and the chat's turns about it, in the caller's one transaction: a failure leaves
    both, never a patient gone with its quotes still in the chat."""
    forget_patient(s, user_id, patient.id)
    store.delete_patient(s, patient)


def _token_counts(usage: Usage) -> dict[str, int]:
    return {"input_tokens": max(0, usage.input_tokens - usage.cache_read_tokens),
            "output_tokens": usage.output_tokens, "cache_read_input_tokens": usage.cache_read_tokens}
