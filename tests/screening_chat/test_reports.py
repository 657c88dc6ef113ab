"""The report for the doctor and the patient, built from a screening's stored results over HTTP (demo
model, offline trials): what it says in HTML and in the PDF's text, who can read it, and the assistant
building it on request."""

from __future__ import annotations

import html as markup
import io
import re

from pypdf import PdfReader
from starlette.testclient import TestClient

from backend.exports.screening_report import DISCLAIMER
from backend.screening.explain import GLOSSARY
from tests.screening_chat.conftest import Screened, ask, context


def _pdf_text(client: TestClient, url: str) -> str:
    r = client.get(url)
    assert r.status_code == 200 and r.headers["content-type"] == "application/pdf"
    return " ".join(" ".join(page.extract_text().split()) for page in PdfReader(io.BytesIO(r.content)).pages)


def test_the_report_says_what_decided_each_verdict(demo_alice: TestClient, alice_screened: Screened) -> None:
    s = alice_screened
    sid = s.detail["id"]
    r = demo_alice.post(f"/api/screenings/{sid}/reports", json={"title": "For Dr Lee"})
    assert r.status_code == 201, r.text
    report = r.json()
    assert report["trial_count"] == len(s.shortlist) and report["title"] == "For Dr Lee"
    html = demo_alice.get(report["html_url"])
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in html.headers["content-security-policy"]
    page = markup.unescape(html.text)
    pdf = _pdf_text(demo_alice, report["pdf_url"])

    sentences = {x["index"]: x["text"] for x in s.detail["sentences"]}
    for text in (page, " ".join(pdf.split())):
        assert "supports, and never replaces, a clinician" in text
        # the ranked shortlist, best first, each with its verdict
        positions = [text.index(t["nct_id"]) for t in s.shortlist]
        assert positions == sorted(positions)
        for t in s.shortlist:
            assert t["verdict"] in text
        assert "Questions to ask your doctor" in text and "Words used in this report" in text
    assert DISCLAIMER.split(".")[0] in page
    excluded = next(t for t in s.shortlist if t["verdict"] == "EXCLUDED")
    deciding = [c for c in excluded["criteria"] if c["label"] == "NOT_MET"]
    assert deciding
    for c in deciding:  # the criterion that excluded, and the note's sentences it rests on
        assert c["criterion"]["text"] in page
        for i in c["evidence"]:
            assert sentences[i] in page
    # the glossary holds the terms the report uses, and only those
    used = {term for term in GLOSSARY if re.search(rf"(?<![a-z0-9]){re.escape(term)}(?![a-z0-9])", page.lower())}
    listed = set(re.findall(r"<dt>([^<]+)</dt>", page.split('id="glossary"')[1].split("</section>")[0]))
    assert {"inclusion criteria", "exclusion criteria", "excluded"} <= listed <= used
    # sites where the record has them (the offline records of these trials list some)
    assert page.count("Sites:") == len(s.shortlist)
    assert page.count("none listed in the record") < len(s.shortlist)
    listing = demo_alice.get(f"/api/screenings/{sid}/reports").json()
    assert [x["id"] for x in listing] == [report["id"]]


def test_report_of_chosen_trials_and_its_refusals(demo_alice: TestClient, alice_screened: Screened) -> None:
    sid = alice_screened.detail["id"]
    first = alice_screened.shortlist[0]["nct_id"]
    one = demo_alice.post(f"/api/screenings/{sid}/reports", json={"nct_ids": [first]}).json()
    assert one["trial_count"] == 1
    assert demo_alice.post(f"/api/screenings/{sid}/reports", json={"nct_ids": ["NCT09999999"]}).status_code == 409
    assert demo_alice.post(f"/api/screenings/{sid}/reports", json={"format": "pdf"}).status_code == 422
    assert demo_alice.delete(f"/api/screening-reports/{one['id']}").status_code == 204
    assert demo_alice.get(one["html_url"]).status_code == 404


def test_the_assistant_builds_the_report_when_asked(demo_alice: TestClient, alice_screened: Screened) -> None:
    turn = ask(demo_alice, "Could you put together a printable summary for her oncologist?", context(alice_screened))
    assert turn.tools == ["create_screening_report"]
    card = next(c for c in turn.cards if c["type"] == "screening_report")
    report = card["data"]["report"]
    assert report["screening_id"] == alice_screened.detail["id"]
    assert report["pdf_url"] in turn.text or "PDF" in turn.text
    assert "Questions to ask your doctor" in _pdf_text(demo_alice, report["pdf_url"])
