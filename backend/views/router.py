"""Saved views: the working state of each page per user (GET/PUT `/api/views/{app}/current`) and named
views (`/api/views/{app}`, `/api/views/{app}/{id}`). Owner-only: another user's view is a 404."""

from __future__ import annotations

from fastapi import APIRouter, Response
from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from backend.auth.deps import CurrentUser
from backend.db.base import utcnow
from backend.db.ids import DbId
from backend.db.models.views import WORKING, SavedView
from backend.deps import DbDep
from backend.errors import Conflict, NotFound, error_responses
from backend.routing import OneHopRoute
from backend.views.schemas import (
    MAX_NAMED_VIEWS,
    App,
    CurrentView,
    SavedViewRead,
    ViewCreate,
    ViewState,
    ViewUpdate,
)

router = APIRouter(tags=["views"], responses=error_responses(401, 422), route_class=OneHopRoute)
OWNED = error_responses(404)
NAMED = error_responses(409)  # a name already used on this page, or too many views


def _working(s: Session, user_id: int, app: str) -> SavedView | None:
    return s.scalar(select(SavedView).where(SavedView.user_id == user_id, SavedView.app == app,
                                            SavedView.name == WORKING))


def _named(s: Session, user_id: int, app: str, view_id: int) -> SavedView:
    row = s.get(SavedView, view_id)
    if row is None or row.user_id != user_id or row.app != app or row.name == WORKING:
        raise NotFound(f"View {view_id} not found.")
    return row


def _name_free(s: Session, user_id: int, app: str, name: str, but: int | None = None) -> None:
    taken = s.scalar(select(SavedView.id).where(SavedView.user_id == user_id, SavedView.app == app,
                                                SavedView.name == name))
    if taken is not None and taken != but:
        raise Conflict(f"You already have a view named “{name}” here.")


@router.get("/api/views/{app}/current")
def get_current(app: App, user: CurrentUser, db: DbDep) -> CurrentView:
    with db.session() as s:
        row = _working(s, user.id, app)
        return CurrentView(app=app, state=row.state if row else None, updated_at=row.updated_at if row else None)


@router.put("/api/views/{app}/current")
def put_current(app: App, body: ViewState, user: CurrentUser, db: DbDep) -> CurrentView:
    """Replace the page's working state (the page sends it, debounced, as it changes)."""
    now = utcnow()
    for attempt in range(2):  # two tabs may write the first state at once: the loser updates the winner's row
        try:
            with db.session() as s:
                row = _working(s, user.id, app)
                if row is None:
                    row = SavedView(user_id=user.id, app=app, name=WORKING, state=body.state, created_at=now)
                    s.add(row)
                row.state = body.state
                row.updated_at = now
            break
        except IntegrityError:
            if attempt:
                raise
    return CurrentView(app=app, state=body.state, updated_at=now)


@router.delete("/api/views/{app}/current", status_code=204, response_class=Response)
def reset_current(app: App, user: CurrentUser, db: DbDep) -> Response:
    """Forget the page's working state (the page opens empty next time); named views stay."""
    with db.session() as s:
        s.execute(delete(SavedView).where(SavedView.user_id == user.id, SavedView.app == app,
                                          SavedView.name == WORKING))
    return Response(status_code=204)


@router.get("/api/views/{app}")
def list_views(app: App, user: CurrentUser, db: DbDep) -> list[SavedViewRead]:
    """Your named views of this page, newest first."""
    with db.session() as s:
        rows = s.scalars(select(SavedView).where(SavedView.user_id == user.id, SavedView.app == app,
                                                 SavedView.name != WORKING)
                         .order_by(SavedView.updated_at.desc(), SavedView.id.desc()))
        return [SavedViewRead.model_validate(r) for r in rows]


@router.post("/api/views/{app}", status_code=201, responses=NAMED)
def create_view(app: App, body: ViewCreate, user: CurrentUser, db: DbDep) -> SavedViewRead:
    with db.session() as s:
        _name_free(s, user.id, app, body.name)
        count = s.scalar(select(func.count()).select_from(SavedView).where(
            SavedView.user_id == user.id, SavedView.app == app, SavedView.name != WORKING)) or 0
        if count >= MAX_NAMED_VIEWS:
            raise Conflict(f"You have {MAX_NAMED_VIEWS} views here already: delete one first.")
        now = utcnow()
        row = SavedView(user_id=user.id, app=app, name=body.name, state=body.state, created_at=now, updated_at=now)
        s.add(row)
        s.flush()
        return SavedViewRead.model_validate(row)


@router.get("/api/views/{app}/{view_id}", responses=OWNED)
def get_view(app: App, view_id: DbId, user: CurrentUser, db: DbDep) -> SavedViewRead:
    with db.session() as s:
        return SavedViewRead.model_validate(_named(s, user.id, app, view_id))


@router.patch("/api/views/{app}/{view_id}", responses={**OWNED, **NAMED})
def update_view(app: App, view_id: DbId, body: ViewUpdate, user: CurrentUser, db: DbDep) -> SavedViewRead:
    with db.session() as s:
        row = _named(s, user.id, app, view_id)
        if body.name is not None and body.name != row.name:
            _name_free(s, user.id, app, body.name, but=row.id)
            row.name = body.name
        if body.state is not None:
            row.state = body.state
        row.updated_at = utcnow()
        s.flush()
        return SavedViewRead.model_validate(row)


@router.delete("/api/views/{app}/{view_id}", status_code=204, response_class=Response, responses=OWNED)
def delete_view(app: App, view_id: DbId, user: CurrentUser, db: DbDep) -> Response:
    """Delete a named view (the page keeps its copy, so Undo saves it again)."""
    with db.session() as s:
        gone = s.execute(delete(SavedView).where(SavedView.id == view_id, SavedView.user_id == user.id,
                                                 SavedView.app == app, SavedView.name != WORKING))
        if gone.rowcount != 1:  # type: ignore[attr-defined]
            raise NotFound(f"View {view_id} not found.")
    return Response(status_code=204)
