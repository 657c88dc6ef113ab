"""Exports and reports: what leaves the app reads back as the table and conversation the user saw, carries
only the user's own AI column results, and is a 404 for anyone else."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from openpyxl import load_workbook
from pypdf import PdfReader
from starlette.testclient import TestClient

from backend.ai_columns.schemas import AiColumn
from backend.ai_columns.service import criteria_hash
from backend.db.models import AiColumnResult
from backend.db.session import Database
from tests.conftest import add_user
from tests.fakes.anthropic_server import FakeAnthropic, Reply, Script
from tests.fakes.fake_page import chat
from tests.sse import parse

pytestmark = pytest.mark.usefixtures("test_registry")

RANDOMIZED = AiColumn(name="Randomized?", criteria="The study is a randomized controlled trial", type="boolean")
SIZE = AiColumn(name="Sample size", criteria="How many participants were enrolled?", type="text")
COLUMNS = [{"key": "pmid", "label": "PMID"}, {"key": "title", "label": "Title"}, {"key": "year", "label": "Year"}]
# As the page shows them: filtered to three rows and sorted newest first (not PMID order).
ROWS: list[dict[str, Any]] = [
    {"pmid": "300", "title": "EGFR inhibitors in NSCLC: a randomized trial", "year": 2024},
    {"pmid": "100", "title": "=HYPERLINK(\"http://evil.example\",\"click\")", "year": 2021},
    {"pmid": "200", "title": "Ünïcode — αβγ cohort study", "year": 2019},
]


def user_id(db: Database, name: str) -> int:
    from backend.db.models import User

    with db.session() as s:
        found = s.query(User).filter_by(username=name).one_or_none()
        return found.id if found else add_user(db, name)


def store(db: Database, uid: int, column: AiColumn, item_id: str, value: str, reasoning: str,
          evidence: list[dict[str, str]]) -> None:
    with db.session() as s:
        s.add(AiColumnResult(user_id=uid, criteria_hash=criteria_hash(column), column_type=column.type,
                             app="tablizer", item_id=item_id, model="demo", value=value, reasoning=reasoning,
                             evidence=evidence))


@pytest.fixture
def alice_results(alice: TestClient, db: Database) -> int:
    uid = user_id(db, "alice")
    store(db, uid, RANDOMIZED, "300", "MET", "Publication type is Randomized Controlled Trial.",
          [{"quote": "Randomized Controlled Trial", "section": "details"}])
    store(db, uid, RANDOMIZED, "200", "NOT_MET", "A cohort study.", [])
    store(db, uid, SIZE, "300", "412 patients", "Methods say 412 were enrolled.",
          [{"quote": "n=412", "section": "abstract"}, {"quote": "two arms", "section": "title"}])
    return uid


def table_body(**extra: Any) -> dict[str, Any]:
    return {"app": "tablizer", "columns": COLUMNS, "rows": ROWS,
            "ai_columns": [RANDOMIZED.model_dump(), SIZE.model_dump()], **extra}


def test_csv_is_the_table_as_shown_with_the_users_ai_columns(alice: TestClient, alice_results: int) -> None:
    r = alice.post("/api/exports/table?format=csv", json=table_body())
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/csv")
    assert r.headers["content-disposition"].startswith('attachment; filename="tablizer-results-')
    assert r.content.startswith(b"\xef\xbb\xbf")  # Excel reads the BOM as UTF-8
    rows = list(csv.reader(io.StringIO(r.content.decode("utf-8-sig"))))
    assert rows[0] == ["PMID", "Title", "Year", "Randomized?", "Randomized?: reasoning", "Randomized?: evidence",
                       "Sample size", "Sample size: reasoning", "Sample size: evidence"]
    assert [row[0] for row in rows[1:]] == ["300", "100", "200"]  # the page's order, not the id order
    # each quote says where in the record it was found
    assert rows[1][3:9] == ["Yes", "Publication type is Randomized Controlled Trial.",
                            "[Record details] Randomized Controlled Trial", "412 patients",
                            "Methods say 412 were enrolled.", "[Abstract] n=412 | [Title] two arms"]
    assert rows[2][3:] == [""] * 6  # never evaluated: empty, not "Unknown"
    assert rows[3][1] == "Ünïcode — αβγ cohort study" and rows[3][3] == "No"
    assert rows[2][1].startswith("'=HYPERLINK")  # a formula is written as text


def test_xlsx_reads_back_with_the_same_cells(alice: TestClient, alice_results: int) -> None:
    csv_rows = list(csv.reader(io.StringIO(
        alice.post("/api/exports/table?format=csv", json=table_body()).content.decode("utf-8-sig"))))
    r = alice.post("/api/exports/table?format=xlsx", json=table_body())
    assert r.status_code == 200
    assert '.xlsx"; filename*=' in r.headers["content-disposition"]
    sheet = load_workbook(io.BytesIO(r.content)).active
    assert sheet is not None
    values = [[("" if c is None else str(c)) for c in row] for row in sheet.iter_rows(values_only=True)]
    assert len(values) == len(ROWS) + 1
    assert values[0] == csv_rows[0]
    for got, want in zip(values[1:], csv_rows[1:], strict=True):
        assert got[0] == want[0] and got[3:] == want[3:]
    formula = sheet.cell(row=3, column=2)
    assert formula.data_type == "s" and str(formula.value).startswith("=HYPERLINK")  # text, never evaluated
    assert sheet.cell(row=2, column=1).hyperlink.target == "https://pubmed.ncbi.nlm.nih.gov/300/"


def test_another_users_export_never_carries_my_ai_results(alice_results: int, bob: TestClient) -> None:
    r = bob.post("/api/exports/table?format=csv", json=table_body())
    rows = list(csv.reader(io.StringIO(r.content.decode("utf-8-sig"))))
    assert all(row[3:] == [""] * 6 for row in rows[1:])


def test_bad_table_requests_are_422(alice: TestClient) -> None:
    assert alice.post("/api/exports/table?format=pdf", json=table_body()).status_code == 422
    missing_id = table_body(rows=[{"title": "no id"}])
    r = alice.post("/api/exports/table", json=missing_id)
    assert r.status_code == 422 and "pmid" in r.json()["detail"]


def test_conversation_exports_as_markdown_and_html(alice: TestClient, bob: TestClient,
                                                   fake_llm: FakeAnthropic) -> None:
    fake_llm.script(Script.answer(Reply.tool("lookup", {"q": "egfr"})),
                    Script.text("See NCT01234567 and PMID 31415926.\n\n<script>alert(1)</script> **bold**"))
    events = chat(alice, "what about EGFR?")
    conv = events[0].data["conversation_id"]
    md = alice.get(f"/api/conversations/{conv}/export?format=markdown")
    assert md.status_code == 200 and md.headers["content-type"].startswith("text/markdown")
    text = md.text
    assert "> what about EGFR?" in text
    assert "- Lookup · 2 results" in text  # the tool step, with the count its result reported
    assert "See NCT01234567 and PMID 31415926." in text
    assert "[NCT01234567](https://clinicaltrials.gov/study/NCT01234567)" in text
    assert "[PMID 31415926](https://pubmed.ncbi.nlm.nih.gov/31415926/)" in text
    html = alice.get(f"/api/conversations/{conv}/export?format=html")
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assert "script-src" not in html.headers["content-security-policy"]
    assert "default-src 'none'" in html.headers["content-security-policy"]
    assert "<script>" not in html.text and "&lt;script&gt;alert(1)&lt;/script&gt;" in html.text
    assert "<strong>bold</strong>" in html.text
    assert '<a href="https://clinicaltrials.gov/study/NCT01234567">NCT01234567</a>' in html.text
    assert "what about EGFR?" in html.text
    for fmt in ("markdown", "html"):
        assert bob.get(f"/api/conversations/{conv}/export?format={fmt}").status_code == 404


def build(client: TestClient, body: dict[str, Any]) -> list[Any]:
    r = client.post("/api/reports", json=body)
    assert r.status_code == 200, r.text
    return parse(r.text)


def test_report_builds_with_progress_and_reads_back(alice: TestClient, bob: TestClient, alice_results: int,
                                                    fake_llm: FakeAnthropic) -> None:
    fake_llm.script(Script.text("Two of the three are **randomized**; NCT07654321 is related."))
    conv = chat(alice, "summarise")[0].data["conversation_id"]
    chart = {"title": "Articles by year", "kind": "bar",
             "points": [{"label": "2019", "value": 1}, {"label": "2021", "value": 1}, {"label": "2024", "value": 1}]}
    events = build(alice, table_body(title="EGFR shortlist", query="egfr nsclc", charts=[chart],
                                     conversation_id=conv))
    kinds = [e.event for e in events]
    assert kinds[0] == "report_progress" and kinds[-1] == "report_ready"
    steps = [e.data["done"] for e in events if e.event == "report_progress"]
    assert steps == sorted(steps) and steps[-1] == events[0].data["total"]
    report = events[-1].data["report"]
    assert report["row_count"] == 3 and report["title"] == "EGFR shortlist"

    html = alice.get(report["html_url"])
    assert html.status_code == 200 and "default-src 'none'" in html.headers["content-security-policy"]
    page = html.text
    assert "<strong>randomized</strong>" in page  # the conversation's newest answer is the summary
    assert page.count("<svg") == 1 and "Articles by year" in page
    assert "Publication type is Randomized Controlled Trial." in page
    assert "'=HYPERLINK" not in page and "=HYPERLINK(&#34;http://evil.example&#34;" in page
    assert 'href="https://pubmed.ncbi.nlm.nih.gov/300/"' in page

    pdf = alice.get(report["pdf_url"])
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")
    reader = PdfReader(io.BytesIO(pdf.content))
    text = " ".join(page.extract_text() for page in reader.pages)
    for expected in ("EGFR shortlist", "EGFR inhibitors in NSCLC", "αβγ", "412 patients", "Articles by year",
                     "Publication type is Randomized Controlled Trial."):
        assert expected in " ".join(text.split()), expected

    listed = alice.get("/api/reports").json()
    assert [r["id"] for r in listed] == [report["id"]]
    assert bob.get("/api/reports").json() == []
    for url in (report["html_url"], report["pdf_url"]):
        assert bob.get(url).status_code == 404
    # Bob cannot borrow Alice's conversation as his report's summary.
    failed = build(bob, table_body(title="mine", conversation_id=conv))
    assert failed[-1].event == "error" and failed[-1].data["code"] == "not_found"


def test_report_summary_is_the_latest_answer_on_the_app_unless_left_out(alice: TestClient,
                                                                       fake_llm: FakeAnthropic) -> None:
    fake_llm.script(Script.text("Older answer."), Script.text("Newest answer, about **EGFR**."))
    conv = chat(alice, "first")[0].data["conversation_id"]
    chat(alice, "second", conversation_id=conv)
    ready = build(alice, table_body(title="latest"))[-1].data["report"]
    page = alice.get(ready["html_url"]).text
    assert "Newest answer, about <strong>EGFR</strong>." in page and "Older answer." not in page
    bare = build(alice, table_body(title="bare", include_answer=False))[-1].data["report"]
    assert "Newest answer" not in alice.get(bare["html_url"]).text


def test_report_needs_rows_and_a_title(alice: TestClient) -> None:
    assert alice.post("/api/reports", json=table_body(title="")).status_code == 422
    assert alice.post("/api/reports", json=table_body(title="t", rows=[])).status_code == 422
