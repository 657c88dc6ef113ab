"""Patients and screenings in the database, always scoped to their owner: another user's patient or
screening does not exist (404). Every function runs inside a caller's short session (in a thread).

A running screening holds its patient's lease (`claim`, renewed by its worker, see `service.py`); one
whose lease lapsed or whose worker is provably dead is `interrupted` by whoever looks next (`settle`), so
a crashed worker never leaves a patient blocked or a screening "running" forever.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any, Literal

from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.orm import Session

from backend.chat.log import Frame
from backend.db.base import utcnow
from backend.db.models import (
    CachedJudgement,
    Patient,
    PatientVersion,
    Screening,
    ScreeningCriterion,
    ScreeningEvent,
    ScreeningReport,
    ScreeningTrial,
)
from backend.errors import Conflict, NotFound
from backend.quotas import record_usage
from backend.screening.models import PatientProfile, ScreenedTrial
from backend.screening.schemas import (
    PatientDetail,
    PatientRead,
    PatientVersionRead,
    ScreeningDetail,
    ScreeningError,
    ScreeningFailed,
    ScreeningRead,
    ScreeningUsage,
    TrialProblem,
)

LEASE = timedelta(seconds=15)
INTERRUPTED = ScreeningError(message="The screening was interrupted (the server stopped); the trials screened "
                                     "so far are kept. Start it again to screen the rest.",
                             code="interrupted", retryable=True)
StopReason = Literal["stopped", "shutdown", "deleted", "lost"]
DeadWorkers = Callable[[Session, Iterable[str | None]], set[str]]


# ---- patients -------------------------------------------------------------------------------------

def owned_patient(s: Session, user_id: int, patient_id: int) -> Patient:
    patient = s.get(Patient, patient_id)
    if patient is None or patient.user_id != user_id:
        raise NotFound(f"Patient {patient_id} not found.")
    return patient


def current_version(s: Session, patient_id: int) -> PatientVersion:
    version = s.scalars(select(PatientVersion).where(PatientVersion.patient_id == patient_id)
                        .order_by(PatientVersion.number.desc()).limit(1)).first()
    assert version is not None, "a patient always has a version"
    return version


def create_patient(s: Session, user_id: int, label: str | None, note: str, profile: PatientProfile) -> PatientDetail:
    now = utcnow()
    patient = Patient(user_id=user_id, label=label or _default_label(profile), created_at=now, updated_at=now)
    s.add(patient)
    s.flush()
    s.add(PatientVersion(patient_id=patient.id, number=1, note=note, profile=_dump(profile), edited=False,
                         created_at=now))
    s.flush()
    return patient_detail(s, patient)


def add_version(s: Session, patient: Patient, note: str, profile: PatientProfile, edited: bool) -> None:
    """The note and profile as a new current version; older ones no screening reads are let go."""
    latest = current_version(s, patient.id)
    s.add(PatientVersion(patient_id=patient.id, number=latest.number + 1, note=note, profile=_dump(profile),
                         edited=edited, created_at=utcnow()))
    s.flush()
    _prune_versions(s, patient.id)


def _prune_versions(s: Session, patient_id: int) -> None:
    keep = current_version(s, patient_id).id
    used = select(Screening.version_id).where(Screening.patient_id == patient_id)
    unused = select(PatientVersion.id).where(PatientVersion.patient_id == patient_id, PatientVersion.id != keep,
                                             PatientVersion.id.not_in(used))
    ids = list(s.scalars(unused))
    if ids:
        s.execute(delete(CachedJudgement).where(CachedJudgement.version_id.in_(ids)))
        s.execute(delete(PatientVersion).where(PatientVersion.id.in_(ids)))


def list_patients(s: Session, user_id: int, limit: int = 500) -> list[PatientRead]:
    patients = list(s.scalars(select(Patient).where(Patient.user_id == user_id)
                              .order_by(Patient.updated_at.desc(), Patient.id.desc()).limit(limit)))
    newest = (select(PatientVersion.patient_id, func.max(PatientVersion.number).label("n"))
              .where(PatientVersion.patient_id.in_([p.id for p in patients]))
              .group_by(PatientVersion.patient_id).subquery())
    versions = {v.patient_id: v for v in s.scalars(select(PatientVersion).join(
        newest, (PatientVersion.patient_id == newest.c.patient_id) & (PatientVersion.number == newest.c.n)))}
    return [_patient_read(p, versions[p.id]) for p in patients]


def patient_detail(s: Session, patient: Patient) -> PatientDetail:
    versions = list(s.scalars(select(PatientVersion).where(PatientVersion.patient_id == patient.id)
                              .order_by(PatientVersion.number.desc())))
    current = versions[0]
    return PatientDetail(**_patient_read(patient, current).model_dump(), note=current.note,
                         profile=PatientProfile.model_validate(current.profile),
                         versions=[_version_read(v) for v in versions])


def delete_patient(s: Session, patient: Patient) -> None:
    """The patient and everything derived from its notes, children first (the foreign keys cascade too)."""
    screenings = select(Screening.id).where(Screening.patient_id == patient.id)
    _delete_screenings(s, screenings)
    versions = select(PatientVersion.id).where(PatientVersion.patient_id == patient.id)
    s.execute(delete(CachedJudgement).where(CachedJudgement.version_id.in_(versions)))
    s.execute(delete(PatientVersion).where(PatientVersion.patient_id == patient.id))
    s.execute(delete(Patient).where(Patient.id == patient.id))


def _patient_read(p: Patient, version: PatientVersion) -> PatientRead:
    running = p.active_screening_id if p.active_expires_at and p.active_expires_at > utcnow() else None
    return PatientRead(id=p.id, label=p.label, summary=str(version.profile.get("summary") or ""),
                       created_at=p.created_at, updated_at=p.updated_at, version=_version_read(version),
                       running_screening_id=running)


def _version_read(v: PatientVersion) -> PatientVersionRead:
    return PatientVersionRead(id=v.id, number=v.number, edited=v.edited, created_at=v.created_at)


def _default_label(profile: PatientProfile) -> str:
    text = profile.summary or ", ".join(profile.conditions[:2]) or "Patient"
    return text[:200]


def _dump(value: Any) -> dict[str, Any]:
    return value.model_dump(mode="json")


# ---- the lease of a running screening ---------------------------------------------------------------

def begin(s: Session, user_id: int, patient: Patient, mode: str, nct_ids: list[str], max_candidates: int,
          model: str, worker_id: str | None, dead: DeadWorkers | None = None) -> tuple[Screening, PatientVersion]:
    """A new running screening of the patient's current version, holding the patient (409 while another
    screening of it runs)."""
    settle(s, patient, dead)
    version = current_version(s, patient.id)
    screening = Screening(user_id=user_id, patient_id=patient.id, version_id=version.id, status="running",
                          mode=mode, nct_ids=nct_ids, max_candidates=max_candidates, model=model,
                          worker_id=worker_id, created_at=utcnow())
    s.add(screening)
    s.flush()
    now = utcnow()
    taken = s.execute(update(Patient).where(
        Patient.id == patient.id, or_(Patient.active_screening_id.is_(None), Patient.active_expires_at < now))
        .values(active_screening_id=screening.id, active_expires_at=now + LEASE)
        .execution_options(synchronize_session=False))
    if taken.rowcount != 1:  # type: ignore[attr-defined]
        raise Conflict("A screening of this patient is already running. Wait for it to finish or stop it, "
                       "then start again.")
    return screening, version


def renew(s: Session, screening_ids: list[int]) -> dict[int, StopReason | None]:
    """Renew the leases of this worker's running screenings; for each, why it should stop: "stopped"
    (Stop was asked), "lost" (another worker found its lease lapsed and interrupted it: this worker was
    too slow to renew), "deleted"; None to go on."""
    if not screening_ids:
        return {}
    s.execute(update(Patient).where(Patient.active_screening_id.in_(screening_ids))
              .values(active_expires_at=utcnow() + LEASE).execution_options(synchronize_session=False))
    rows = {sid: (stop, status) for sid, stop, status in s.execute(
        select(Screening.id, Screening.stop_requested, Screening.status).where(Screening.id.in_(screening_ids)))}
    reasons: dict[int, StopReason | None] = {}
    for sid in screening_ids:
        stop, status = rows.get(sid, (False, None))
        reasons[sid] = "deleted" if status is None else "lost" if status != "running" else "stopped" if stop else None
    return reasons


def request_stop(s: Session, screening: Screening) -> bool:
    """Ask the worker running it to stop (it sees this within a second). False when it is not running."""
    if screening.status != "running":
        return False
    screening.stop_requested = True
    return True


def settle(s: Session, patient: Patient, dead: DeadWorkers | None = None) -> None:
    """Interrupt the patient's screenings still marked running that no live worker holds."""
    running = list(s.scalars(select(Screening).where(Screening.patient_id == patient.id,
                                                     Screening.status == "running")))
    if not running:
        return
    now = utcnow()
    live = patient.active_screening_id if patient.active_expires_at and patient.active_expires_at > now else None
    gone = dead(s, [r.worker_id for r in running]) if dead else set()
    for screening in running:
        if screening.id == live and screening.worker_id not in gone:
            continue
        last = ScreeningFailed(**INTERRUPTED.model_dump())
        finish(s, screening, "interrupted", Frame(screening.last_event_id + 1, last.type, last.to_data()),
               error=INTERRUPTED)
        if screening.id == patient.active_screening_id:
            patient.active_screening_id = None
            patient.active_expires_at = None
    s.flush()


# ---- what a run saves -------------------------------------------------------------------------------

def save_event(s: Session, screening_id: int, frame: Frame) -> None:
    s.add(ScreeningEvent(screening_id=screening_id, seq=frame.id, type=frame.type, data=frame.data))
    _saved(s, screening_id, frame.id)


def save_trial(s: Session, screening_id: int, seq: int, trial: ScreenedTrial, done: int, total: int) -> None:
    data = trial.model_dump(mode="json", exclude={"criteria"})
    row = ScreeningTrial(screening_id=screening_id, seq=seq, nct_id=trial.nct_id, title=trial.title,
                         verdict=trial.verdict.value, score=trial.score,
                         data={"trial": data, "done": done, "total": total}, created_at=utcnow())
    s.add(row)
    s.flush()
    s.add_all([ScreeningCriterion(trial_id=row.id, position=i, kind=c.criterion.kind, label=c.label.value,
                                  data=c.model_dump(mode="json")) for i, c in enumerate(trial.criteria)])
    _saved(s, screening_id, seq)


def _saved(s: Session, screening_id: int, seq: int) -> None:
    s.execute(update(Screening).where(Screening.id == screening_id).values(last_event_id=seq)
              .execution_options(synchronize_session=False))


def finish(s: Session, screening: Screening, status: str, last: Frame | None, *,
           usage: ScreeningUsage | None = None, error: ScreeningError | None = None) -> None:
    """The screening's end: its status, its terminal event, its tokens and cost (what was not charged to
    the user's day yet is; a screening counts as one of the day's turns), its patient released."""
    if last is not None:
        s.add(ScreeningEvent(screening_id=screening.id, seq=last.id, type=last.type, data=last.data))
        screening.last_event_id = last.id
    screening.status = status
    screening.finished_at = utcnow()
    screening.error = error.model_dump() if error else None
    if usage is not None:
        charge(s, screening, usage, turns=1)
    s.execute(update(Patient).where(Patient.id == screening.patient_id,
                                    Patient.active_screening_id == screening.id)
              .values(active_screening_id=None, active_expires_at=None)
              .execution_options(synchronize_session=False))


USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def charge(s: Session, screening: Screening, usage: ScreeningUsage, turns: int = 0) -> None:
    """Store the screening's usage so far (cumulative) and add what grew since the last store to the
    user's day: the row is the ledger, so tokens are counted as they are spent (a stopped or failed
    screening's too) and never twice."""
    grown = {f: max(0, getattr(usage, f) - (getattr(screening, f) or 0)) for f in USAGE_FIELDS}
    for f in USAGE_FIELDS:
        setattr(screening, f, max(getattr(usage, f), getattr(screening, f) or 0))
    if usage.estimated_cost_usd is not None:
        screening.estimated_cost_usd = usage.estimated_cost_usd
    if turns or any(grown.values()):
        record_usage(s, screening.user_id, grown, screening.model, turns=turns)


# ---- reading screenings -----------------------------------------------------------------------------

def owned_screening(s: Session, user_id: int, screening_id: int) -> Screening:
    screening = s.get(Screening, screening_id)
    if screening is None or screening.user_id != user_id:
        raise NotFound(f"Screening {screening_id} not found.")
    return screening


def list_screenings(s: Session, patient: Patient, limit: int = 200) -> list[ScreeningRead]:
    rows = list(s.scalars(select(Screening).where(Screening.patient_id == patient.id)
                          .order_by(Screening.created_at.desc(), Screening.id.desc()).limit(limit)))
    counts = {sid: int(n) for sid, n in s.execute(select(ScreeningTrial.screening_id, func.count()).where(
        ScreeningTrial.screening_id.in_([r.id for r in rows])).group_by(ScreeningTrial.screening_id))}
    return [_screening_read(r, counts.get(r.id, 0)) for r in rows]


def screening_detail(s: Session, screening: Screening) -> ScreeningDetail:
    events = {e.seq: e for e in s.scalars(select(ScreeningEvent).where(
        ScreeningEvent.screening_id == screening.id).order_by(ScreeningEvent.seq))}
    trials = [ScreenedTrial.model_validate(f.data["trial"]) for f in _trial_frames(s, screening.id, 0)]
    found: dict[str, Any] = {"problems": []}
    for event in events.values():
        data = {k: v for k, v in event.data.items() if k != "type"}
        if event.type == "profile":
            found.update(profile=data["profile"], sentences=data["sentences"])
        elif event.type == "candidates":
            found.update(candidates=data["candidates"], tool_calls=data["tool_calls"], missing=data["missing"])
        elif event.type == "trial_error":
            found["problems"].append(TrialProblem.model_validate(data))
        elif event.type == "complete":
            found["ranking"] = data["ranking"]
    order = {nct: i for i, nct in enumerate(found.get("ranking", []))}
    trials.sort(key=lambda t: (order.get(t.nct_id, len(order)), -t.score))
    return ScreeningDetail(**_screening_read(screening, len(trials)).model_dump(), **found, trials=trials,
                           last_event_id=screening.last_event_id)


def ranking_so_far(s: Session, screening_id: int) -> list[str]:
    """The trials screened so far, best first (a stopped screening's ranking)."""
    return list(s.scalars(select(ScreeningTrial.nct_id).where(ScreeningTrial.screening_id == screening_id)
                          .order_by(ScreeningTrial.score.desc(), ScreeningTrial.seq)))


def stored_frames(s: Session, screening_id: int, after: int) -> list[Frame]:
    """The screening's events with id > `after`, as they were sent (trials rebuilt from their rows)."""
    events = [Frame(id=e.seq, type=e.type, data=e.data) for e in s.scalars(
        select(ScreeningEvent).where(ScreeningEvent.screening_id == screening_id, ScreeningEvent.seq > after))]
    return sorted(events + _trial_frames(s, screening_id, after), key=lambda f: f.id)


def _trial_frames(s: Session, screening_id: int, after: int) -> list[Frame]:
    rows = list(s.scalars(select(ScreeningTrial).where(ScreeningTrial.screening_id == screening_id,
                                                       ScreeningTrial.seq > after).order_by(ScreeningTrial.seq)))
    criteria: dict[int, list[dict[str, Any]]] = {r.id: [] for r in rows}
    for c in s.scalars(select(ScreeningCriterion).where(ScreeningCriterion.trial_id.in_(list(criteria)))
                       .order_by(ScreeningCriterion.trial_id, ScreeningCriterion.position)):
        criteria[c.trial_id].append(c.data)
    return [Frame(id=r.seq, type="trial", data={"trial": {**r.data["trial"], "criteria": criteria[r.id]},
                                                "done": r.data["done"], "total": r.data["total"],
                                                "type": "trial"}) for r in rows]


def _screening_read(r: Screening, trials: int) -> ScreeningRead:
    usage = ScreeningUsage(model=r.model, input_tokens=r.input_tokens, output_tokens=r.output_tokens,
                           cache_read_input_tokens=r.cache_read_input_tokens,
                           cache_creation_input_tokens=r.cache_creation_input_tokens,
                           estimated_cost_usd=r.estimated_cost_usd)
    return ScreeningRead(id=r.id, patient_id=r.patient_id, version_id=r.version_id, status=r.status,
                         mode=r.mode, nct_ids=r.nct_ids, max_candidates=r.max_candidates,
                         trials_screened=trials, usage=usage,
                         error=ScreeningError.model_validate(r.error) if r.error else None,
                         created_at=r.created_at, finished_at=r.finished_at)


def delete_screening(s: Session, screening: Screening) -> None:
    patient_id = screening.patient_id
    _delete_screenings(s, select(Screening.id).where(Screening.id == screening.id))
    patient = s.get(Patient, patient_id)
    if patient is not None:
        if patient.active_screening_id == screening.id:  # deleted while it ran: the patient is free
            patient.active_screening_id = patient.active_expires_at = None
        _prune_versions(s, patient_id)


def _delete_screenings(s: Session, ids: Any) -> None:
    trials = select(ScreeningTrial.id).where(ScreeningTrial.screening_id.in_(ids))
    s.execute(delete(ScreeningCriterion).where(ScreeningCriterion.trial_id.in_(trials)))
    s.execute(delete(ScreeningTrial).where(ScreeningTrial.screening_id.in_(ids)))
    s.execute(delete(ScreeningEvent).where(ScreeningEvent.screening_id.in_(ids)))
    s.execute(delete(ScreeningReport).where(ScreeningReport.screening_id.in_(ids)))
    s.execute(delete(Screening).where(Screening.id.in_(ids)).execution_options(synchronize_session=False))

