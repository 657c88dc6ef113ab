"""The admin usage page's API: tokens and estimated cost per user, per day and per model over a period,
from `model_usage` (what every saved turn adds to; `backend/quotas/service.py` `record_usage`), as JSON
for the page's chart and tables and as CSV.

Admins only (403 for anyone else, as every admin route). Costs are estimates at list prices
(`prices.py`); days are UTC.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from datetime import date, timedelta
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response
from pydantic import BaseModel
from sqlalchemy import select

from backend.auth.deps import AdminUser
from backend.db.base import utcnow
from backend.db.models import ModelUsage, User
from backend.deps import DbDep, SettingsDep
from backend.errors import InvalidInput, error_responses
from backend.observability.prices import price_for
from backend.routing import OneHopRoute

MAX_DAYS = 366
TOKENS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
ZERO = {"turns": 0, "cost_usd": 0.0, **dict.fromkeys(TOKENS, 0)}

router = APIRouter(prefix="/api/admin/usage", tags=["admin"], responses=error_responses(401, 403, 422),
                   route_class=OneHopRoute)


class UsageTotals(BaseModel):
    turns: int
    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int
    cost_usd: float  # estimated, USD

    def add(self, other: UsageTotals) -> None:
        for name in ("turns", *TOKENS):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.cost_usd = round(self.cost_usd + other.cost_usd, 6)


class UsageRow(UsageTotals):
    day: date
    user_id: int
    username: str
    model: str


class UsageGroup(UsageTotals):
    key: str  # the user's name, the day (ISO) or the model id


class UsageReport(BaseModel):
    start: date
    end: date  # inclusive
    total: UsageTotals
    by_user: list[UsageGroup]
    by_day: list[UsageGroup]  # every day of the period, zeros included, oldest first
    by_model: list[UsageGroup]
    rows: list[UsageRow]  # one per day, user and model with usage


Start = Annotated[date | None, Query(description="first UTC day (default: 29 days before `end`); not after "
                                                 "`end`, and the period at most 366 days")]
End = Annotated[date | None, Query(description="last UTC day, included (default: today)")]


def _period(start: date | None, end: date | None) -> tuple[date, date]:
    end = end or utcnow().date()
    start = start or end - timedelta(days=29)
    if start > end:
        raise InvalidInput("start must not be after end.")
    if (end - start).days + 1 > MAX_DAYS:
        raise InvalidInput(f"The period is at most {MAX_DAYS} days.")
    return start, end


def usage_rows(db: DbDep, start: date, end: date, prices: str | None) -> list[UsageRow]:
    with db.session() as s:
        found = s.execute(select(ModelUsage, User.username).join(User, User.id == ModelUsage.user_id)
                          .where(ModelUsage.day >= start, ModelUsage.day <= end)
                          .order_by(ModelUsage.day, User.username, ModelUsage.model)).all()
    rows = []
    for usage, username in found:
        counts = {name: int(getattr(usage, name)) for name in TOKENS}
        rows.append(UsageRow(day=usage.day, user_id=usage.user_id, username=username, model=usage.model,
                             turns=usage.turns, cost_usd=round(price_for(usage.model, prices).cost(counts), 6),
                             **counts))
    return rows


def _grouped(rows: Iterable[UsageRow], key: str, keys: Iterable[str] = ()) -> list[UsageGroup]:
    groups: dict[str, UsageGroup] = {k: UsageGroup(key=k, **ZERO) for k in keys}
    for row in rows:
        name = str(getattr(row, key))
        groups.setdefault(name, UsageGroup(key=name, **ZERO)).add(row)
    return list(groups.values())


@router.get("")
def usage_report(user: AdminUser, db: DbDep, settings: SettingsDep, start: Start = None,
                 end: End = None) -> UsageReport:
    """Tokens and estimated cost over a period: in total, per user, per day, per model, and every row."""
    first, last = _period(start, end)
    rows = usage_rows(db, first, last, settings.model_prices)
    total = UsageTotals(**ZERO)
    for row in rows:
        total.add(row)
    days = [(first + timedelta(days=n)).isoformat() for n in range((last - first).days + 1)]
    by_user = sorted(_grouped(rows, "username"), key=lambda g: -g.cost_usd - g.input_tokens * 1e-12)
    by_model = sorted(_grouped(rows, "model"), key=lambda g: -g.cost_usd - g.input_tokens * 1e-12)
    return UsageReport(start=first, end=last, total=total, by_user=by_user, by_day=_grouped(rows, "day", days),
                       by_model=by_model, rows=rows)


def _cell(value: object) -> object:
    """A user name a spreadsheet would run as a formula (=, +, -, @) is written as text."""
    return f"'{value}" if isinstance(value, str) and value[:1] in ("=", "+", "-", "@") else value


@router.get("/export.csv", response_class=Response,
            responses={200: {"content": {"text/csv": {}}, "description": "one line per day, user and model"}})
def usage_csv(user: AdminUser, db: DbDep, settings: SettingsDep, start: Start = None, end: End = None) -> Response:
    """The same rows as CSV, for a spreadsheet."""
    first, last = _period(start, end)
    out = io.StringIO()
    writer = csv.writer(out)
    columns = ("day", "user_id", "username", "model", "turns", *TOKENS, "cost_usd")
    writer.writerow(columns)
    for row in usage_rows(db, first, last, settings.model_prices):
        writer.writerow([_cell(getattr(row, c)) for c in columns])
    filename = f"colleague-usage-{first.isoformat()}-{last.isoformat()}.csv"
    return Response(out.getvalue(), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})
