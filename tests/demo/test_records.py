"""Demo AI columns over records: the fields the AI column service sends (publication types, MeSH, phase,
sex, ages, enrollment, eligibility…) decide, and "unknown" is kept for what a record does not say.

Documents are built by the service's own `trial_document` / `article_document`, and the replies read back
as the evaluator reads them, so a change in either layout shows up here."""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from backend.ai_columns.service import article_document, trial_document
from backend.criteria.prompts import (
    CRITERION_SYSTEM_PROMPT,
    TEXT_SYSTEM_PROMPT,
    criterion_user_message,
    text_user_message,
)
from backend.db.session import Database
from backend.demo.verdict import demo_reply_text
from backend.main import create_app
from backend.sources.models import Article, Outcome, TrialDetail
from tests.ai_columns.test_evaluate import rows, run
from tests.conftest import make_settings, signed_in

RCT = Article(pmid="1", title="Drug X versus placebo in heart failure", journal="Lancet", year=2020,
              publication_types=["Journal Article", "Randomized Controlled Trial"],
              mesh_terms=["Humans", "Aged", "Heart Failure"],
              abstract="We enrolled 412 patients. Overall survival did not differ.")
REVIEW = Article(pmid="2", title="Treatment of renal hypertension", publication_types=["Journal Article", "Review"],
                 mesh_terms=["Humans", "Adult", "Hypertension, Renal"],
                 abstract="This review summarises the treatment options for renal hypertension.")
COHORT = Article(pmid="3", title="Statin use and dementia", publication_types=["Journal Article"],
                 abstract="In this retrospective cohort of 12,500 adults, statin use was associated with lower "
                          "dementia risk. CONCLUSIONS: Statins may protect.")
BARE = Article(pmid="4", title="Assembly of dendrimers", publication_types=["Journal Article"])

ELIGIBILITY = """Inclusion Criteria:
- Histologically confirmed NSCLC
- Age 18 to 75 years

Exclusion Criteria:
- Active brain metastases (treated, stable brain metastases are allowed)
- Prior treatment with pembrolizumab or nivolumab
- Interstitial lung disease"""
TRIAL = TrialDetail(nct_id="NCT00000001", title="A Randomized Phase 3 Study of Drug Y in NSCLC", phase=["PHASE3"],
                    status="RECRUITING", study_type="INTERVENTIONAL", interventions=["Drug Y", "Docetaxel"],
                    enrollment=600, sex="ALL", minimum_age="18 Years", maximum_age="75 Years",
                    eligibility_criteria=ELIGIBILITY,
                    primary_outcomes=[Outcome(measure="Overall survival", time_frame="5 years")])
WOMEN = TrialDetail(nct_id="NCT00000002", title="Exercise after breast surgery", phase=["NA"], status="COMPLETED",
                    sex="FEMALE", minimum_age="12 Years", eligibility_criteria="Inclusion Criteria:\n- Women after "
                    "surgery\n\nExclusion Criteria:\n- Pregnancy", interventions=["Exercise"])
PARTIAL = TrialDetail(nct_id="NCT00000003", title="Cefazolin before surgery", status="RECRUITING",
                      interventions=["Cefazolin"])


def decide(criterion: str, document: str) -> dict[str, Any]:
    reply = demo_reply_text(CRITERION_SYSTEM_PROMPT, criterion_user_message(criterion, None, document))
    assert reply is not None
    parsed: dict[str, Any] = json.loads(reply)
    return parsed


def extract(question: str, document: str) -> dict[str, Any]:
    reply = demo_reply_text(TEXT_SYSTEM_PROMPT, text_user_message(question, document))
    assert reply is not None
    parsed: dict[str, Any] = json.loads(reply)
    return parsed


RANDOMIZED = "Is this article a randomized controlled trial (participants randomly assigned to groups)?"


@pytest.mark.parametrize(("article", "answer", "evidence"), [
    (RCT, "yes", "Publication types: Journal Article; Randomized Controlled Trial"),
    (REVIEW, "no", "Publication types: Journal Article; Review"),
    (COHORT, "no", "Publication types: Journal Article"),
    (BARE, "unknown", None),
])
def test_randomized_is_read_off_publication_types_and_abstract(article: Article, answer: str,
                                                                evidence: str | None) -> None:
    reply = decide(RANDOMIZED, article_document(article))
    assert reply["answer"] == answer
    assert reply["evidence"] == ([evidence] if evidence else [])


@pytest.mark.parametrize(("criterion", "article", "answer"), [
    ("Does this article include patients over 65?", RCT, "yes"),  # MeSH: Aged
    ("Does this article include patients over 65?", REVIEW, "no"),  # MeSH: Adult only
    ("Does this article report overall survival?", RCT, "yes"),
    ("Does this article report overall survival?", REVIEW, "no"),  # an abstract that never mentions it
    ("Is this article about drug resistance? Answer from its title, abstract and keywords.", COHORT, "no"),
    ("Is this a review?", REVIEW, "yes"),
    ("Is this a review?", RCT, "no"),
    ("Was this study done in humans?", RCT, "yes"),
    ("Does this article report overall survival?", BARE, "unknown"),  # nothing but a title
])
def test_article_questions(criterion: str, article: Article, answer: str) -> None:
    assert decide(criterion, article_document(article))["answer"] == answer


@pytest.mark.parametrize(("criterion", "trial", "answer"), [
    ("Is this trial a randomized controlled trial?", TRIAL, "yes"),
    ("Is this trial a randomized controlled trial?", WOMEN, "unknown"),  # the record does not describe allocation
    ("Is this a phase 3 trial?", TRIAL, "yes"),
    ("Is this a phase 3 trial?", WOMEN, "no"),
    ("Is this trial recruiting?", WOMEN, "no"),
    ("Does this trial enroll women only?", WOMEN, "yes"),
    ("Does this trial enroll women only?", TRIAL, "no"),
    ("Does this trial accept children?", TRIAL, "no"),
    ("Does this trial accept children?", WOMEN, "yes"),
    ("Does this trial accept children?", PARTIAL, "unknown"),  # a partial record carries no ages
    ("Does this trial enroll more than 500 participants?", TRIAL, "yes"),
    ("Aged 18 years or older", TRIAL, "yes"),
    ("Aged 80 years or older", TRIAL, "no"),  # its maximum age is 75
    ("Aged 18 years or older", PARTIAL, "unknown"),
    ("Do this trial's eligibility criteria exclude patients with interstitial lung disease?", TRIAL, "yes"),
    ("Do this trial's eligibility criteria exclude patients with hepatitis?", TRIAL, "no"),
    ("Do this trial's eligibility criteria exclude patients with hepatitis?", PARTIAL, "unknown"),
    ("Based on the eligibility criteria, does this trial allow patients with brain metastases?", TRIAL, "yes"),
    ("Based on the eligibility criteria, does this trial allow patients with prior pembrolizumab?", TRIAL, "no"),
    ("Does this trial test a checkpoint inhibitor?", TRIAL, "no"),
    ("Does this trial compare against a placebo?", TRIAL, "no"),  # its interventions are listed
    ("Does this trial use docetaxel?", TRIAL, "yes"),
    ("Does this trial use radiotherapy?", TRIAL, "no"),
    ("Has an independent data monitoring committee", TRIAL, "unknown"),  # a record's silence on this decides nothing
])
def test_trial_questions(criterion: str, trial: TrialDetail, answer: str) -> None:
    assert decide(criterion, trial_document(trial))["answer"] == answer


@pytest.mark.parametrize(("question", "document", "answer"), [
    ("What age range is eligible for this trial? Give the minimum and maximum age.", trial_document(TRIAL),
     "18 Years to 75 Years"),
    ("What age range is eligible for this trial?", trial_document(WOMEN), "12 Years and older"),
    ("What age range is eligible for this trial?", trial_document(PARTIAL), None),
    ("How many participants does this trial enroll or analyze? Give the number.", trial_document(TRIAL), "600"),
    ("How many participants does this article enroll or analyze?", article_document(RCT), "412 patients"),
    ("How many participants does this article enroll or analyze?", article_document(COHORT), "12,500 adults"),
    ("What is the primary endpoint of this trial?", trial_document(TRIAL), "Overall survival (time frame: 5 years)"),
    ("What is the study design of this article?", article_document(RCT), "Randomized Controlled Trial"),
    ("What is the study design of this article?", article_document(COHORT), "Retrospective study"),
    ("What are the main exclusion criteria of this trial?", trial_document(WOMEN), "Pregnancy"),
    ("In which countries does this trial run?", trial_document(TRIAL), None),  # the document has no locations
])
def test_text_columns_extract_from_fields(question: str, document: str, answer: str | None) -> None:
    assert extract(question, document)["answer"] == answer


def test_clinical_notes_keep_the_patient_heuristics() -> None:
    note = "0. A 58-year-old woman presents with chest pain.\n1. She denies smoking."
    assert decide("Smoking", note)["answer"] == "no"
    assert decide("Female patients", note)["answer"] == "yes"


def test_an_ai_column_over_the_offline_corpus_decides(db_url: str, db: Database) -> None:
    """Through the AI column route: 'Randomized?' over real PubMed records of the offline corpus."""
    app = create_app(make_settings(db_url))
    client: TestClient = signed_in(app, db, "dora")
    try:
        column = {"name": "Randomized?", "type": "boolean", "criteria": RANDOMIZED}
        events = run(client, ["26", "167", "16304656"], column=column, app="tablizer")
        by_id = {e.data["id"]: e.data for e in rows(events)}
        assert by_id["26"]["value"] == "MET"  # Randomized Controlled Trial publication type
        assert by_id["167"]["value"] == "NOT_MET"  # a review
        assert by_id["16304656"]["value"] == "UNKNOWN"  # no abstract, only "Journal Article"
        assert any("Randomized Controlled Trial" in quote for quote in by_id["26"]["evidence"])
    finally:
        client.__exit__(None, None, None)
