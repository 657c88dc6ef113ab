"""The assistant on TrialScout's screening, over HTTP with the demo model and offline trials: the page
context it is shown, and questions in many phrasings answered from the stored results through the
screening tools (the trial named by id, by rank, by verdict or by the open criteria view), cards the user
accepts through the screening API, and never a dead end."""

from __future__ import annotations

import json
from typing import Any

import pytest
from starlette.testclient import TestClient

from backend.pages.budget import budget_chars
from backend.pages.trialscout import build_context
from tests.screening_api.conftest import NOTE_MARKERS
from tests.screening_chat.conftest import EXTRA, Screened, ask, context


def _loaded(s: Screened) -> list[dict[str, Any]]:
    rows = [{"nct_id": t["nct_id"], "title": t["title"], "status": "COMPLETED"} for t in s.shortlist]
    return rows + [{"nct_id": k, "title": f"Loaded trial {k}", "status": v} for k, v in EXTRA.items()
                   if k not in {t["nct_id"] for t in s.shortlist}]


def _excluded(s: Screened) -> dict[str, Any]:
    return next(t for t in s.shortlist if t["verdict"] == "EXCLUDED")


def test_the_context_carries_profile_and_shortlist_not_the_note(alice_screened: Screened) -> None:
    text = build_context(context(alice_screened, loaded=_loaded(alice_screened)))
    profile = alice_screened.patient["profile"]
    assert f"PATIENT {alice_screened.patient['id']}" in text and profile["summary"] in text
    for rank, t in enumerate(alice_screened.shortlist, 1):
        assert f"{rank}. {t['nct_id']} | {t['verdict']} | score {t['score']:.2f} | met {t['met']}, " \
               f"not met {t['not_met']}, unknown {t['unknown']}" in text
    note_only = [m for m in NOTE_MARKERS if m not in json.dumps(profile, ensure_ascii=False)]
    assert note_only
    for marker in note_only:  # the note's own words that the profile does not carry
        assert marker not in text


def test_a_long_shortlist_stays_within_the_budget(alice_screened: Screened) -> None:
    big = {"nct_id": "NCT00000000", "title": "T" * 900, "verdict": "UNCERTAIN", "score": 0.5, "met": 1,
           "not_met": 0, "unknown": 3}
    ctx = context(alice_screened, shortlist=[{**big, "nct_id": f"NCT{i:08d}"} for i in range(100)])
    text = build_context(ctx)
    assert len(text) <= budget_chars()
    assert "more screened trials not shown: get_screening_trial reads any by NCT id or rank" in text


WHY = ["Why is {nct} excluded?", "why was {nct} ruled out for her", "What disqualified her from {nct}?",
       "Explain the verdict on {nct}", "{nct} - what's the reason it says excluded?"]


@pytest.mark.parametrize("question", WHY)
def test_why_excluded_is_answered_from_the_stored_criteria(demo_alice: TestClient, alice_screened: Screened,
                                                           question: str) -> None:
    trial = _excluded(alice_screened)
    turn = ask(demo_alice, question.format(nct=trial["nct_id"]), context(alice_screened))
    assert turn.tools == ["get_screening_trial"]
    assert "EXCLUDED" in turn.text and trial["nct_id"] in turn.text
    for c in trial["criteria"]:
        if c["label"] == "NOT_MET":
            assert c["criterion"]["text"] in turn.text  # the stored deciding criterion, word for word


@pytest.mark.parametrize("question, rank", [
    ("What would make her eligible for the second one?", 2),
    ("how could she qualify for trial #1", 1),
    ("What needs to change for the 3rd study?", 3),
    ("what would it take to get into the last one on the list", -1),
])
def test_what_would_make_her_eligible_names_the_open_criteria(demo_alice: TestClient, alice_screened: Screened,
                                                              question: str, rank: int) -> None:
    trial = alice_screened.shortlist[rank - 1 if rank > 0 else -1]
    turn = ask(demo_alice, question, context(alice_screened))
    assert turn.tools == ["get_screening_trial"]
    assert trial["nct_id"] in turn.text
    blocking = [c for c in trial["criteria"] if c["label"] != "MET"]
    assert blocking
    for c in blocking:
        assert c["criterion"]["text"] in turn.text


def test_this_one_means_the_open_criteria_view(demo_alice: TestClient, alice_screened: Screened) -> None:
    trial = alice_screened.shortlist[1]
    turn = ask(demo_alice, "why is this one not a clear yes?", context(alice_screened, open_nct=trial["nct_id"]))
    assert turn.tools == ["get_screening_trial"] and trial["nct_id"] in turn.text


@pytest.mark.parametrize("question", ["screen the recruiting ones too",
                                      "Can you also screen her against the trials that are still enrolling?",
                                      "please rescreen including recruiting studies"])
def test_screen_the_recruiting_ones_too_proposes_a_screening(demo_alice: TestClient, alice_screened: Screened,
                                                             question: str) -> None:
    s = alice_screened
    loaded = _loaded(s)
    recruiting = [r["nct_id"] for r in loaded if r["status"] == "RECRUITING"]
    turn = ask(demo_alice, question, context(s, loaded=loaded))
    assert turn.tools == ["propose_screening"]
    card = next(c for c in turn.cards if c["type"] == "screening_proposal")["data"]
    assert card["patient_id"] == s.patient["id"]
    assert set(card["request"]["nct_ids"]) == {t["nct_id"] for t in s.shortlist} | set(recruiting)
    # Accept: the card's request, exactly, to the screening API
    r = demo_alice.post(f"/api/patients/{card['patient_id']}/screenings", json=card["request"])
    assert r.status_code == 200
    assert "complete" in r.text


def test_screening_request_with_nothing_new_says_so(demo_alice: TestClient, alice_screened: Screened) -> None:
    s = alice_screened
    loaded = [{"nct_id": t["nct_id"], "title": t["title"], "status": "RECRUITING"} for t in s.shortlist]
    turn = ask(demo_alice, "screen the recruiting trials as well", context(s, loaded=loaded))
    assert turn.tools == ["propose_screening"] and not turn.cards
    assert "already in the current screening" in turn.text


@pytest.mark.parametrize("question, place", [("which of these are near Boston?", "Boston"),
                                             ("Any sites close to Houston, Texas?", "Houston"),
                                             ("Which trials have a location in Canada", "Canada")])
def test_sites_near_a_place(demo_alice: TestClient, alice_screened: Screened, question: str, place: str) -> None:
    turn = ask(demo_alice, question, context(alice_screened))
    assert turn.tools == ["find_screening_sites"]
    start = next(e.data for e in turn.events if e.event == "tool_start")
    assert start["input"]["place"].startswith(place)
    assert "trials have a site" in turn.text


def test_a_profile_edit_is_a_card_accepted_through_the_patient_api(demo_alice: TestClient,
                                                                    alice_screened: Screened) -> None:
    s = alice_screened
    turn = ask(demo_alice, "Update her profile: ECOG is 2 now, and add BRCA1 mutation to her biomarkers",
               context(s))
    assert turn.tools == ["propose_profile_edit"]
    card = next(c for c in turn.cards if c["type"] == "patient_profile_edit")["data"]
    assert {c["field"] for c in card["changes"]} == {"performance_status", "biomarkers"}
    assert demo_alice.get(f"/api/patients/{s.patient['id']}").json()["profile"] == s.patient["profile"]  # not yet
    r = demo_alice.patch(f"/api/patients/{card['patient_id']}", json={"profile": card["profile"]})
    assert r.status_code == 200
    saved = r.json()["profile"]
    assert saved["key_facts"]["performance_status"] == "ECOG 2"
    assert "BRCA1 mutation" in saved["key_facts"]["biomarkers"]
    assert r.json()["version"]["number"] == s.patient["version"]["number"] + 1


def test_no_dead_ends(demo_alice: TestClient, alice_screened: Screened) -> None:
    no_patient = ask(demo_alice, "why is NCT00372424 excluded for my patient?", context(None))
    assert "patient panel" in no_patient.text and not no_patient.tools
    unscreened = {**context(alice_screened, loaded=_loaded(alice_screened))}
    unscreened["screening"] = {**unscreened["screening"], "screening_id": None, "shortlist": []}
    turn = ask(demo_alice, "why is the first one excluded?", unscreened)
    assert turn.tools == ["propose_screening"] and turn.cards
    missing = ask(demo_alice, "what would make her eligible for the ninth one?", context(alice_screened))
    assert "no #9" in missing.text and missing.complete["suggested_values"]
    overview = ask(demo_alice, "How did she do overall?", context(alice_screened))
    assert all(t["nct_id"] in overview.text for t in alice_screened.shortlist)


def test_another_users_ids_read_nothing(demo_alice: TestClient, demo_bob: TestClient,
                                        alice_screened: Screened) -> None:
    """Bob's page names Alice's patient and screening: every tool says "not found" and shows nothing."""
    ctx = context(alice_screened)
    trial = _excluded(alice_screened)
    for question in (f"Why is {trial['nct_id']} excluded?", "Make the report for her doctor",
                     "She's actually 70, please update the profile", "which of these are near Boston?"):
        turn = ask(demo_bob, question, ctx)
        assert turn.tools, question
        errors = [e.data for e in turn.events if e.event == "tool_complete"]
        assert all(e["is_error"] for e in errors), question
        assert "not found" in turn.text
        assert not turn.cards
        for criterion in trial["criteria"]:
            assert criterion["reasoning"] not in turn.text or not criterion["reasoning"]
    assert demo_alice.get(f"/api/screenings/{alice_screened.detail['id']}/reports").json() == []


@pytest.mark.parametrize("question", ["Which trials exclude patients with brain metastases?",
                                      "find trials about breast cancer screening", "How many are phase 3?",
                                      "Add a column: does the trial allow prior immunotherapy?"])
def test_other_trialscout_questions_keep_their_own_answers(demo_alice: TestClient, alice_screened: Screened,
                                                           question: str) -> None:
    """A loaded patient does not turn every question into a screening one."""
    turn = ask(demo_alice, question, context(alice_screened, loaded=_loaded(alice_screened)))
    assert not set(turn.tools) & {"get_screening_trial", "find_screening_sites", "propose_screening",
                                  "propose_profile_edit", "create_screening_report"}
    assert "patient panel" not in turn.text
