"""Trial search completeness (spec: PRESCREEN diagram 2): `study_type` through the REST route, the
`search_trials` tool and the page context, over the offline corpus; the model's compact rows carry
conditions[:3]."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from tests.fakes.anthropic_server import FakeAnthropic, Script, tool_reply
from tests.fakes.fake_page import chat, page_context_of

CONDITION = "asthma"
TRIALSCOUT = {"current_page": "trialscout", "condition": CONDITION, "study_type": "OBSERVATIONAL", "phase": [],
              "status": [], "trials": [], "total_matched": 0, "loaded_count": 0, "ai_columns": []}


def search(client: TestClient, **params: Any) -> dict[str, Any]:
    r = client.get("/api/trials/search", params={"condition": CONDITION, "page_size": 100, **params})
    assert r.status_code == 200, r.text
    return r.json()


def test_the_rest_route_narrows_by_study_type(alice: TestClient) -> None:
    everything = search(alice)
    kinds = {t["study_type"] for t in everything["trials"]}
    assert {"INTERVENTIONAL", "OBSERVATIONAL"} <= kinds
    for study_type in ("INTERVENTIONAL", "observational"):
        page = search(alice, study_type=study_type)
        assert page["trials"] and {t["study_type"] for t in page["trials"]} == {study_type.upper()}
        assert page["total_count"] < everything["total_count"]
    r = alice.get("/api/trials/search", params={"condition": CONDITION, "study_type": "EXPANDED_ACCESS"})
    assert r.status_code == 422 and "study_type" in r.json()["detail"]


def test_the_tool_takes_a_study_type_and_rows_carry_three_conditions(
        alice: TestClient, fake_llm: FakeAnthropic) -> None:
    fake_llm.script(Script.answer(tool_reply("search_trials", {"condition": CONDITION,
                                                               "study_type": "OBSERVATIONAL", "status": []})),
                    Script.text("Observational asthma studies listed."))
    events = chat(alice, "Observational asthma studies?", context=TRIALSCOUT)
    assert events[-1].event == "complete"
    assert "Study type: OBSERVATIONAL" in page_context_of(fake_llm.requests[0])
    result = fake_llm.requests[1]["messages"][-1]["content"][0]["content"]
    rows = [line for line in result.splitlines() if line.startswith("- NCT")]
    assert rows and all("| observational |" in line for line in rows)
    assert "study_type='OBSERVATIONAL'" in result.splitlines()[0]
    expected = search(alice, study_type="OBSERVATIONAL")["trials"]
    first = next(t for t in expected if t["nct_id"] == rows[0][2:13])
    assert f"conditions: {'; '.join(first['conditions'][:3])} |" in rows[0]
    card = next(e.data["payload"] for e in events if e.event == "tool_complete")
    assert {t["study_type"] for t in card["data"]["trials"]} == {"OBSERVATIONAL"}
