"""The admin usage API: tokens and estimated cost per user, day and model, from what saved turns recorded;
CSV; admins only."""

from __future__ import annotations

import csv
import io
from datetime import date, timedelta

import pytest
from starlette.testclient import TestClient

from backend.db.base import utcnow
from backend.db.models import ModelUsage
from backend.db.session import Database
from backend.observability.prices import price_for
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.fakes.fake_page import chat
from tests.sse import types

pytestmark = pytest.mark.usefixtures("test_registry")


def test_turns_are_counted_per_user_day_and_model(alice: TestClient, bob: TestClient, admin: TestClient,
                                                  fake_llm: FakeAnthropic, db: Database) -> None:
    fake_llm.default = Script.text("An answer.")
    assert types(chat(alice, "one"))[-1] == "complete"
    assert types(chat(alice, "two"))[-1] == "complete"
    assert types(chat(bob, "three"))[-1] == "complete"
    model = fake_llm.requests[-1]["model"]
    yesterday = utcnow().date() - timedelta(days=1)
    with db.session() as s:  # an older day, before models were recorded
        alice_id = s.query(ModelUsage.user_id).filter_by(model=model).order_by(ModelUsage.user_id).first()[0]
        s.add(ModelUsage(user_id=alice_id, day=yesterday, model="unrecorded", turns=3, input_tokens=900,
                         output_tokens=90, cache_creation_input_tokens=0, cache_read_input_tokens=0))

    r = admin.get("/api/admin/usage", params={"start": yesterday.isoformat()})
    assert r.status_code == 200, r.text
    report = r.json()
    users = {g["key"]: g for g in report["by_user"]}
    assert users["alice"]["turns"] == 5 and users["bob"]["turns"] == 1
    assert users["alice"]["output_tokens"] == 90 + 2 * 12 and users["bob"]["output_tokens"] == 12
    models = {g["key"]: g for g in report["by_model"]}
    assert set(models) == {model, "unrecorded"} and models[model]["turns"] == 3
    today = utcnow().date().isoformat()
    assert [g["key"] for g in report["by_day"]] == [yesterday.isoformat(), today]
    assert report["total"]["turns"] == 6
    row = next(r for r in report["rows"] if r["username"] == "bob")
    tokens = {k: row[k] for k in ("input_tokens", "output_tokens", "cache_read_input_tokens",
                                  "cache_creation_input_tokens")}
    assert row["cost_usd"] == pytest.approx(price_for(model).cost(tokens), abs=1e-6) and row["cost_usd"] > 0

    exported = admin.get("/api/admin/usage/export.csv", params={"start": yesterday.isoformat()})
    assert exported.status_code == 200 and exported.headers["content-type"].startswith("text/csv")
    assert "attachment" in exported.headers["content-disposition"]
    lines = list(csv.DictReader(io.StringIO(exported.text)))
    assert len(lines) == len(report["rows"]) == 3
    assert sum(int(line["turns"]) for line in lines) == 6


def test_only_admins_see_usage(alice: TestClient, admin: TestClient) -> None:
    assert alice.get("/api/admin/usage").status_code == 403
    assert alice.get("/api/admin/usage/export.csv").status_code == 403
    assert TestClient(alice.app).get("/api/admin/usage").status_code == 401


def test_a_bad_period_is_refused_clearly(admin: TestClient) -> None:
    r = admin.get("/api/admin/usage", params={"start": "2026-03-02", "end": "2026-03-01"})
    assert r.status_code == 422 and "start" in r.json()["detail"]
    far = (date(2026, 1, 1) - timedelta(days=400)).isoformat()
    assert admin.get("/api/admin/usage", params={"start": far, "end": "2026-01-01"}).status_code == 422
    assert admin.get("/api/admin/usage", params={"start": "not-a-day"}).status_code == 422
    empty = admin.get("/api/admin/usage", params={"start": "2020-01-01", "end": "2020-01-03"}).json()
    assert empty["rows"] == [] and [g["turns"] for g in empty["by_day"]] == [0, 0, 0]


def test_metrics_need_their_token(app: object, alice: TestClient, admin: TestClient) -> None:
    assert admin.get("/metrics").status_code == 404  # off unless COLLEAGUE_METRICS_TOKEN is set
