"""`get_full_text` on Tablizer through the chat endpoint: live sources over recorded E-utilities bodies
(the network edge is the only fake), and the offline corpus's clear answer."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from starlette.testclient import TestClient

from backend.sources import Sources
from backend.sources.pubmed import PubMedService
from backend.sources.throttle import RateLimiter
from tests.fakes.anthropic_server import FakeAnthropic, Script, tool_reply
from tests.fakes.fake_page import chat
from tests.sources.fakes import FakeEUtils

TABLIZER = {"current_page": "tablizer", "query": "osimertinib", "articles": [], "loaded_count": 0}


@pytest.fixture
def live(alice: TestClient) -> Iterator[FakeEUtils]:
    """Alice's app with live PubMed whose HTTP goes to recorded E-utilities bodies."""
    eutils = FakeEUtils()
    chat_service = alice.app.state.chat  # type: ignore[attr-defined]
    offline = chat_service.sources
    chat_service.sources = Sources("live", offline.trials, PubMedService(
        transport=httpx.MockTransport(eutils), limiter=RateLimiter(0.0)))
    yield eutils
    chat_service.sources = offline


def tool_result(fake: FakeAnthropic) -> str:
    return fake.requests[1]["messages"][-1]["content"][0]["content"]


def test_tablizer_offers_get_full_text(alice: TestClient) -> None:
    pages = alice.get("/api/pages").json()["pages"]
    assert "get_full_text" in pages["tablizer"]["tools"] and "get_full_text" not in pages["trialscout"]["tools"]


def test_a_long_full_text_is_trimmed_to_the_budget_with_progress(
        alice: TestClient, fake_llm: FakeAnthropic, live: FakeEUtils) -> None:
    fake_llm.script(Script.answer(tool_reply("get_full_text", {"pmid": "33567185"})),
                    Script.text("The Methods describe 412 patients."))
    events = chat(alice, "Read the full text of 33567185", context=TABLIZER)
    progress = [e.data for e in events if e.event == "tool_progress"]
    assert [p["stage"] for p in progress][:2] == ["linking", "reading"]
    assert all(0 <= p["progress"] <= 1 for p in progress)
    done = next(e.data for e in events if e.event == "tool_complete")
    assert done["is_error"] is False
    text = tool_result(fake_llm)
    assert text.startswith("Full text of PMID 33567185 (PMC7890123, PubMed Central): Osimertinib in EGFR-mutated")
    assert "Sections (5 of 5, " in text and "Abstract, Introduction, Methods, Results, Discussion" in text
    assert "## Methods\nPatients: Eligible patients were 18 years or older" in text  # short sections whole
    assert "## Discussion\nOsimertinib prolonged progression-free survival" in text  # after the long one
    assert "more characters; call get_full_text with sections=['Results'] to read this section alone]" in text
    assert 15_000 < len(text) < 24_000  # under the loop's cut: the trimming is the tool's own, section by section


def test_asking_for_one_section_returns_only_it(alice: TestClient, fake_llm: FakeAnthropic, live: FakeEUtils) -> None:
    fake_llm.script(Script.answer(tool_reply("get_full_text", {"pmid": "33567185", "sections": ["results"]})),
                    Script.answer(tool_reply("get_full_text", {"pmid": "33567185", "sections": ["figures"]})),
                    Script.text("Done."))
    chat(alice, "Results only", context=TABLIZER)
    first = fake_llm.requests[1]["messages"][-1]["content"][0]["content"]
    assert "## Results" in first and "## Methods" not in first and "Sections (1 of 5" in first
    second = fake_llm.requests[2]["messages"][-1]["content"][0]["content"]
    assert second.startswith("No section of PMID 33567185 matches ['figures']. Its sections: Abstract, ")


def test_an_article_without_a_pmc_version_says_so(alice: TestClient, fake_llm: FakeAnthropic,
                                                  live: FakeEUtils) -> None:
    fake_llm.script(Script.answer(tool_reply("get_full_text", {"pmid": "10000001"})), Script.text("Abstract only."))
    events = chat(alice, "Full text of 10000001?", context=TABLIZER)
    assert next(e.data for e in events if e.event == "tool_complete")["is_error"] is False
    assert "has no PubMed Central version" in tool_result(fake_llm)


def test_offline_the_tool_says_full_text_is_not_in_the_embedded_corpus(
        alice: TestClient, fake_llm: FakeAnthropic) -> None:
    fake_llm.script(Script.answer(tool_reply("get_full_text", {"pmid": "27797938"})), Script.text("Offline."))
    chat(alice, "Full text?", context=TABLIZER)
    assert "Full text is not in the embedded corpus" in tool_result(fake_llm)
    assert "PMC5442267" in tool_result(fake_llm)
