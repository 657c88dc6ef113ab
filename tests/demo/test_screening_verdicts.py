"""The demo model answers a question about a screening's verdicts as a whole ("which trials is she eligible
for?", "how many are excluded?", "show me the best matches") from the shortlist TrialScout's page context
carries: the trials of the verdict asked about with their scores, the others counted, a way on to explain
them; with a patient loaded but not screened it proposes the screening first. Questions about one trial,
about the loaded rows' own fields and new searches keep the answers they had."""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any

import pytest

from backend.chat.markers import SUGGESTED_VALUES
from tests.demo.turn import cards, demo_turn, prose

TRIALS = [
    {"nct_id": f"NCT0710000{i}", "title": title, "phase": phase, "status": status, "enrollment": n}
    for i, (title, phase, status, n) in enumerate(
        [
            ("Trastuzumab Deruxtecan in HER2-low Breast Cancer", ["PHASE3"], "RECRUITING", 540),
            ("Ribociclib With Letrozole", ["PHASE2"], "RECRUITING", 180),
            ("Olaparib for BRCA Carriers", ["PHASE3"], "ACTIVE_NOT_RECRUITING", 300),
            ("Yoga During Radiotherapy", ["NA"], "RECRUITING", 80),
            ("Elacestrant After CDK4/6 Inhibitors", ["PHASE3"], "RECRUITING", 470),
        ]
    )
]
VERDICTS = [
    ("ELIGIBLE", 0.92, 6, 0, 1),
    ("UNCERTAIN", 0.61, 4, 0, 3),
    ("ELIGIBLE", 0.84, 5, 0, 0),
    ("EXCLUDED", 0.12, 2, 2, 0),
    ("EXCLUDED", 0.08, 1, 3, 1),
]
SHORTLIST = sorted(
    (
        {"nct_id": t["nct_id"], "title": t["title"], "verdict": v, "score": s, "met": m, "not_met": nm, "unknown": u}
        for t, (v, s, m, nm, u) in zip(TRIALS, VERDICTS, strict=True)
    ),
    key=lambda e: -float(e["score"]),
)
PATIENT = {
    "patient_id": 12,
    "label": "Mrs Q",
    "profile": {"age": 61, "sex": "female", "conditions": ["metastatic breast cancer"]},
}
BASE = {
    "current_page": "trialscout",
    "condition": "breast cancer",
    "total_matched": 5,
    "loaded_count": 5,
    "trials": TRIALS,
}
PAGES: dict[str, dict[str, Any]] = {
    "screened": {**BASE, "screening": {**PATIENT, "screening_id": 9, "status": "complete", "shortlist": SHORTLIST}},
    "none_eligible": {
        **BASE,
        "screening": {
            **PATIENT,
            "screening_id": 10,
            "status": "complete",
            "shortlist": [
                {**e, "verdict": "EXCLUDED" if e["verdict"] == "ELIGIBLE" else e["verdict"]} for e in SHORTLIST
            ],
        },
    },
    "unscreened": {**BASE, "screening": PATIENT},
    "no_patient": BASE,
}

# Questions about the verdicts as a whole, and the verdict each is about.
ABOUT_VERDICTS = [
    ("which trials is she eligible for?", "ELIGIBLE"),
    ("which ones could my patient join?", "ELIGIBLE"),
    ("show me the best matches", "ELIGIBLE"),
    ("how many are excluded?", "EXCLUDED"),
    ("is she eligible for any of these?", "ELIGIBLE"),
    ("What trials does she qualify for", "ELIGIBLE"),
    ("list the eligible trials", "ELIGIBLE"),
    ("how many trials is the patient eligible for", "ELIGIBLE"),
    ("any eligible ones?", "ELIGIBLE"),
    ("which studies would suit her?", "ELIGIBLE"),
    ("Show the top matches for my patient", "ELIGIBLE"),
    ("which of these trials could she enroll in", "ELIGIBLE"),
    ("what are her options?", "ELIGIBLE"),
    ("how many trials did she qualify for?", "ELIGIBLE"),
    ("which trials is this patient a candidate for", "ELIGIBLE"),
    ("give me the list of trials she's eligible for", "ELIGIBLE"),
    ("So which ones is she eligible for, then?", "ELIGIBLE"),
    ("are any of them a good fit for her", "ELIGIBLE"),
    ("which trials was she excluded from?", "EXCLUDED"),
    ("list the excluded trials", "EXCLUDED"),
    ("how many trials ruled her out?", "EXCLUDED"),
    ("which ones is she not eligible for", "EXCLUDED"),
    ("how many are uncertain?", "UNCERTAIN"),
    ("which trials are still unclear for her?", "UNCERTAIN"),
    ("show me the uncertain ones", "UNCERTAIN"),
    ("What are the best options for this patient?", "ELIGIBLE"),
    ("how many did she pass?", "ELIGIBLE"),
    ("which trials can he join", "ELIGIBLE"),
    ("Top candidates?", "ELIGIBLE"),
    ("count the ineligible trials", "EXCLUDED"),
]
# Requests that are not about the verdicts as a whole: each keeps its card, tool or computed answer.
KEEPS = [
    ("screened", "why is NCT07100003 excluded?", "tool:get_screening_trial"),
    ("screened", "what would make her eligible for the second one?", "tool:get_screening_trial"),
    ("screened", "why is the uncertain one uncertain?", "tool:get_screening_trial"),
    ("screened", "how many of these are recruiting?", "says:4"),
    ("screened", "which trials exclude patients with brain metastases?", "card:ai_column_suggestion"),
    ("screened", "which trials enrol patients over 65?", "card:ai_column_suggestion"),
    ("screened", "only show phase 3 trials", "card:filter_suggestion"),
    ("screened", "find trials for HER2-positive breast cancer in Boston", "card:trial_search_suggestion"),
    ("screened", "screen the recruiting trials too", "tool:propose_screening"),
    ("screened", "make the report for her doctor", "tool:create_screening_report"),
    ("screened", "which trial has the largest enrollment?", "says:NCT07100000"),
    ("no_patient", "which of these trials are eligible for women over 65?", "not:Of the"),
    ("no_patient", "how many are excluded?", "not:Of the"),
]


def turn(page: str, message: str) -> tuple[str, list[str]]:
    """The demo model's answer to one message sent on a page: (text, tools called)."""
    return demo_turn(PAGES[page], message)


def listed(text: str) -> set[str]:
    return set(re.findall(r"^- \*\*(NCT\d{8})\*\*", text, re.M))


def test_the_evaluation_list_is_varied() -> None:
    assert len({m.lower() for m, _ in ABOUT_VERDICTS}) >= 30 and len(KEEPS) >= 10
    assert {v for _, v in ABOUT_VERDICTS} == {"ELIGIBLE", "EXCLUDED", "UNCERTAIN"}


@pytest.mark.parametrize(("message", "verdict"), ABOUT_VERDICTS, ids=[m for m, _ in ABOUT_VERDICTS])
def test_a_question_about_the_verdicts_lists_them_from_the_screening(message: str, verdict: str) -> None:
    text, tools = turn("screened", message)
    said = prose(text)
    assert tools == [] and "beyond what I can do" not in said, (tools, said[:200])
    # Exactly the trials of the verdict asked about, with their scores, and the other verdicts counted.
    wanted = {e["nct_id"] for e in SHORTLIST if e["verdict"] == verdict}
    assert listed(said) == wanted, said
    for e in SHORTLIST:
        if e["verdict"] == verdict:
            assert f"score {e['score']:.2f}" in said
    assert f"{len(wanted)} {'is' if len(wanted) == 1 else 'are'} {verdict}" in said
    others = {v for v in ("ELIGIBLE", "UNCERTAIN", "EXCLUDED") if v != verdict}
    assert all(f"{sum(e['verdict'] == v for e in SHORTLIST)} {v}" in said for v in others), said
    assert SUGGESTED_VALUES in text and "Why is" in text  # a way on: explain a verdict
    # A paragraph right under the list would render inside its last item: the list ends at a blank line.
    ends = [nxt for line, nxt in pairwise(said.splitlines()) if line.startswith("- ") and not nxt.startswith("- ")]
    assert all(not nxt.strip() for nxt in ends), said


def test_with_none_eligible_it_says_so_and_names_the_closest() -> None:
    said = prose(turn("none_eligible", "which trials is she eligible for?")[0])
    assert "0 are ELIGIBLE" in said and "closest are UNCERTAIN" in said
    assert listed(said) == {e["nct_id"] for e in SHORTLIST if e["verdict"] == "UNCERTAIN"}


@pytest.mark.parametrize(
    "message", ["which trials is she eligible for?", "how many are excluded?", "show me the best matches"]
)
def test_before_a_screening_it_proposes_one(message: str) -> None:
    text, tools = turn("unscreened", message)
    assert tools == ["propose_screening"] and "not been screened yet" in text


@pytest.mark.parametrize(("page", "message", "expect"), KEEPS, ids=[f"{p}:{m}" for p, m, _ in KEEPS])
def test_other_requests_keep_their_answers(page: str, message: str, expect: str) -> None:
    text, tools = turn(page, message)
    kind, _, what = expect.partition(":")
    if kind == "card":
        assert what in cards(text), text[:300]
    elif kind == "tool":
        assert tools == [what], (tools, text[:300])
    elif kind == "says":
        assert what in prose(text), text[:300]
    else:
        assert what not in prose(text) and not listed(prose(text)), text[:300]
