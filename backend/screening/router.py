"""`/api/patients` and `/api/screenings`: the signed-in user's patients and their screenings against
trials. Another user's patient or screening, or anything derived from it, is a 404 on every route.

A screening streams as Server-Sent Events (`profile`, `candidates`, one `trial` per screened trial,
`trial_error` for a trial that could not be screened, then `complete` or `error`) with the chat's
encoding, ids and heartbeats (`backend.chat.sse`). It runs on the server: a client that disconnects
stops nothing (`POST /api/screenings/{id}/stop` does), and `GET /api/screenings/{id}/stream` with
`Last-Event-ID` picks it up again.

A screening's reports (for the doctor and the patient) are `backend/exports/screening_reports.py`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Header, Request, Response
from sse_starlette import EventSourceResponse

from backend.auth.deps import CurrentUser
from backend.chat.sse import sse_response
from backend.db.ids import DbId
from backend.errors import error_responses
from backend.openapi import event_stream
from backend.screening.models import MAX_CANDIDATES, MAX_NOTE_CHARS, ScreenRequest
from backend.screening.schemas import (
    PatientCreate,
    PatientDetail,
    PatientRead,
    PatientUpdate,
    ScreeningDetail,
    ScreeningRead,
    ScreeningStreamEvent,
    StopAck,
)
from backend.screening.service import ScreeningService


async def screening_service(request: Request) -> ScreeningService:
    """The app's one `ScreeningService` (`backend.main.create_app` builds it)."""
    return request.app.state.screening


ScreeningDep = Annotated[ScreeningService, Depends(screening_service)]

patients = APIRouter(prefix="/api/patients", tags=["screening"], responses=error_responses(401, 422))
screenings = APIRouter(prefix="/api/screenings", tags=["screening"], responses=error_responses(401, 422))
OWNED = error_responses(404)
EVENTS = event_stream(ScreeningStreamEvent, "The screening's events, one per SSE frame")


@patients.post("", status_code=201, responses=error_responses(429), description=(
    f"A patient from a note (1 to {MAX_NOTE_CHARS:,} characters; an empty or longer one is a 422): the profile "
    "is extracted from it (the model's tokens count in the day's budget: 429 when it is spent). The note is "
    "kept for you only and never logged or echoed in an error."))
async def create_patient(body: PatientCreate, user: CurrentUser, service: ScreeningDep) -> PatientDetail:
    return await service.create_patient(user.id, body)


@patients.get("")
async def list_patients(user: CurrentUser, service: ScreeningDep) -> list[PatientRead]:
    """Your patients, last changed first."""
    return await service.list_patients(user.id)


@patients.get("/{patient_id}", responses=OWNED)
async def get_patient(patient_id: DbId, user: CurrentUser, service: ScreeningDep) -> PatientDetail:
    """The patient's current note and profile, and the versions kept."""
    return await service.patient(user.id, patient_id)


@patients.patch("/{patient_id}", responses=error_responses(404, 429))
async def update_patient(patient_id: DbId, body: PatientUpdate, user: CurrentUser,
                         service: ScreeningDep) -> PatientDetail:
    """Edit the profile and/or the note: a new version (a new note without a profile is read again).
    Older versions are kept while a screening refers to them."""
    return await service.update_patient(user.id, patient_id, body)


@patients.delete("/{patient_id}", status_code=204, responses=OWNED)
async def delete_patient(patient_id: DbId, user: CurrentUser, service: ScreeningDep) -> Response:
    """The patient and everything derived from it: versions, screenings, their trials and criterion
    results, cached judgements, and the chat turns sent while it was loaded (their text redacted). A
    running screening of it is stopped first."""
    await service.delete_patient(user.id, patient_id)
    return Response(status_code=204)


@patients.post("/{patient_id}/screenings", response_class=EventSourceResponse,
               responses={200: EVENTS, **error_responses(404, 409, 429)}, description=(
    "Screen the patient's current version against trials found from its profile, or against exactly "
    f"`nct_ids` (at most {MAX_CANDIDATES}: \"screen these trials\"). Before the first byte: 404, 409 while a "
    "screening of this patient runs, 429 over a quota; after it, failures are `error` events and the trials "
    "already screened stay stored. The `Location` header names the screening."))
async def start_screening(patient_id: DbId, body: ScreenRequest, user: CurrentUser,
                          service: ScreeningDep) -> EventSourceResponse:
    screening_id, frames = await service.start(user.id, patient_id, body)
    response = sse_response(frames, service.close_readers)
    response.headers["Location"] = f"/api/screenings/{screening_id}"
    return response


@patients.get("/{patient_id}/screenings", responses=OWNED)
async def list_screenings(patient_id: DbId, user: CurrentUser, service: ScreeningDep) -> list[ScreeningRead]:
    """The patient's screenings, newest first."""
    return await service.list_screenings(user.id, patient_id)


@screenings.get("/{screening_id}", responses=OWNED)
async def get_screening(screening_id: DbId, user: CurrentUser, service: ScreeningDep) -> ScreeningDetail:
    """The screening as it stands (a running one says so, with the trials screened so far)."""
    return await service.screening(user.id, screening_id)


@screenings.get("/{screening_id}/stream", response_class=EventSourceResponse,
                responses={200: event_stream(ScreeningStreamEvent, "The events after Last-Event-ID"), **OWNED})
async def follow_screening(screening_id: DbId, user: CurrentUser, service: ScreeningDep,
                           last_event_id: Annotated[str | None, Header(max_length=20)] = None) -> EventSourceResponse:
    """The screening's events after `Last-Event-ID` (all without it), then live ones until its terminal
    event. Never starts anything."""
    after = int(last_event_id) if last_event_id and last_event_id.strip().isdigit() else 0
    return sse_response(await service.follow(user.id, screening_id, min(after, 10**9)), service.close_readers)


@screenings.post("/{screening_id}/stop", responses=OWNED)
async def stop_screening(screening_id: DbId, user: CurrentUser, service: ScreeningDep) -> StopAck:
    """Stop the screening; the trials screened so far are kept and it ends `stopped`."""
    return StopAck(stopped=await service.stop(user.id, screening_id))


@screenings.delete("/{screening_id}", status_code=204, responses=OWNED)
async def delete_screening(screening_id: DbId, user: CurrentUser, service: ScreeningDep) -> Response:
    """The screening with its trials and criterion results (stopped first when it runs)."""
    await service.delete_screening(user.id, screening_id)
    return Response(status_code=204)

