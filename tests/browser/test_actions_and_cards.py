"""Journeys against the scripted fake Messages API: an offered "Open trial" opens the trial, a server action
goes back as that action, and a stream editor card's Accept fills the editor."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.harness import Journey
from tests.fakes.anthropic_server import FakeAnthropic, Script

pytestmark = pytest.mark.browser

NCT = "NCT02576665"  # in the offline corpus
STREAM = "EGFR-resistant NSCLC"


def _answer(text: str, actions: list[dict[str, Any]]) -> Script:
    return Script.text(f"{text}\nSUGGESTED_ACTIONS: {json.dumps(actions)}\n")


def _ask(j: Journey, message: str) -> None:
    j.page.get_by_test_id("chat-input").fill(message)
    j.page.get_by_test_id("chat-input").press("Enter")
    expect(j.last_answer()).to_have_class("message message-assistant status-complete")


def test_offered_actions_act_open_trial_opens_the_detail_and_a_server_action_goes_back(
        scripted_journey: Journey, fake_llm: FakeAnthropic) -> None:
    j, page = scripted_journey, scripted_journey.page
    fake_llm.script(_answer(f"{NCT} looks relevant.", [
        {"label": "Open trial", "action": "open_trial", "handler": "client", "data": {"nct_id": NCT}},
        {"label": "Next page", "action": "next_page", "handler": "client"},
        {"label": "Compare with standard of care", "action": "compare_soc", "handler": "server",
         "data": {"nct_id": NCT}}]))
    j.sign_in("/trialscout")
    j.open_chat()
    _ask(j, "Which trial should I look at?")
    actions = j.last_answer().get_by_test_id("suggested-action")
    expect(actions).to_have_count(3)
    # No results are loaded, so there is no next page: that button is greyed; the others act.
    expect(actions.nth(1)).to_be_disabled()
    expect(page.get_by_test_id("detail-panel")).to_have_count(0)
    actions.nth(0).click()
    panel = page.get_by_test_id("detail-panel")
    expect(panel).to_be_visible()
    expect(panel).to_contain_text(NCT)
    expect(panel.get_by_text("Loading full record…")).to_have_count(0)
    j.shot("open-trial-action")

    fake_llm.script(Script.text("Compared: the control arm is standard chemotherapy."))
    actions.nth(2).click()
    expect(page.get_by_test_id("message-user").last.locator(".message-text")).to_have_text(
        "Compare with standard of care")
    expect(j.last_answer()).to_contain_text("Compared: the control arm")
    sent = fake_llm.requests[-1]["messages"][-1]["content"][-1]["text"]
    assert sent == ('[The user clicked your suggested action "Compare with standard of care" (server action '
                    f'`compare_soc` with data {{"nct_id": "{NCT}"}}). Carry it out now.]')
    j.assert_clean()


def test_accepting_stream_editor_cards_fills_the_editor(scripted_journey: Journey,
                                                         fake_llm: FakeAnthropic) -> None:
    j, page = scripted_journey, scripted_journey.page
    j.sign_in_as_admin("/streams")
    page.get_by_test_id("stream-item").filter(has_text=STREAM).click()
    expect(page.get_by_test_id("stream-title")).to_have_text(STREAM)
    page.get_by_test_id("stream-tab-retrieval").click()
    j.open_chat()

    proposal = {"pubmed_query": "osimertinib AND (C797S OR MET amplification)",
                "trial_search": {"condition": "EGFR-mutant NSCLC", "intervention": "amivantamab",
                                 "phase": ["PHASE3"]},
                "reasoning": "Resistance after osimertinib, in both sources."}
    fake_llm.script(Script.text(f"Here is a retrieval setup.\n\nRETRIEVAL_PROPOSAL: {json.dumps(proposal)}\n"))
    _ask(j, "How should this stream retrieve articles and trials?")
    sent = fake_llm.requests[-1]
    assert "- Active tab: retrieval" in sent["messages"][-1]["content"][0]["text"]
    assert "RETRIEVAL_PROPOSAL:" in sent["system"][0]["text"]  # the retrieval tab offers this card
    card = j.last_answer().get_by_test_id("card-retrieval_proposal")
    expect(card.get_by_test_id("card-query")).to_have_text(proposal["pubmed_query"])
    expect(j.last_answer().get_by_text("Show data")).to_have_count(0)  # a card, not the fallback's raw JSON
    card.get_by_test_id("card-accept").click()
    expect(card.get_by_test_id("card-decision")).to_have_text("✓ Accepted")
    expect(page.get_by_test_id("stream-pubmed-query")).to_have_value(proposal["pubmed_query"])
    expect(page.get_by_test_id("stream-trial-condition")).to_have_value("EGFR-mutant NSCLC")
    expect(page.get_by_text("Unsaved changes")).to_be_visible()
    j.shot("retrieval-proposal-accepted")

    # The definition tab's card: Accept puts the proposed description in the editor, on its tab.
    page.get_by_test_id("stream-tab-semantic").click()
    change = {"proposed_changes": {"description": "Resistance to third-generation EGFR TKIs in NSCLC"},
              "confidence": "high", "reasoning": "Names the scope."}
    fake_llm.script(Script.text(f"A sharper definition.\n\nSCHEMA_PROPOSAL: {json.dumps(change)}\n"))
    _ask(j, "Improve the definition")
    card = j.last_answer().get_by_test_id("card-schema_proposal")
    card.get_by_test_id("card-accept").click()
    expect(card.get_by_test_id("card-decision")).to_have_text("✓ Accepted")
    expect(page.get_by_test_id("stream-description")).to_have_value(change["proposed_changes"]["description"])
    conversation = j.api_get(f"/api/conversations/{j.remembered_conversation('kh')}")
    decided = [p["decision"] for m in conversation["messages"] for p in m["extras"].get("payloads", [])]
    assert decided == ["accepted", "accepted"]
    j.assert_clean()
