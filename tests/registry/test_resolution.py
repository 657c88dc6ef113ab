"""Registry resolution and startup validation."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel
from starlette.testclient import TestClient

from backend.config import Settings
from backend.main import create_app
from backend.registry import (
    REGISTRY,
    ClientAction,
    PageConfig,
    PayloadType,
    RegistryError,
    SubTabConfig,
    TabConfig,
    ToolConfig,
    resolve,
    swapped,
)
from backend.registry.builtins import load_builtins


def tool(name: str, is_global: bool = False) -> ToolConfig:
    return ToolConfig(name=name, description=name, input_model=BaseModel, executor=lambda p, c: "",
                      is_global=is_global)


def card(name: str, is_global: bool = False) -> PayloadType:
    return PayloadType(name=name, description=name, source="llm", model=BaseModel,
                       parse_marker=f"{name.upper()}:", is_global=is_global)


TOOLS = {t.name: t for t in [tool("g1", True), tool("g2", True), tool("p1"), tool("t1"), tool("s1")]}
PAYLOADS = {p.name: p for p in [card("gp", True), card("pp"), card("tp"), card("sp")]}
PAGE = PageConfig(page="pg", context_builder=lambda c: "", tools=("p1", "g1"), payloads=("pp",),
                  tabs={"tab": TabConfig(tools=("t1", "p1"), payloads=("tp",),
                                         subtabs={"sub": SubTabConfig(tools=("s1",), payloads=("sp", "gp"))})})


@pytest.mark.parametrize(("tab", "subtab", "tools", "payloads"), [
    (None, None, ["g1", "g2", "p1"], ["gp", "pp"]),
    ("tab", None, ["g1", "g2", "p1", "t1"], ["gp", "pp", "tp"]),
    ("tab", "sub", ["g1", "g2", "p1", "t1", "s1"], ["gp", "pp", "tp", "sp"]),
    ("nope", "sub", ["g1", "g2", "p1"], ["gp", "pp"]),  # unknown tab: the page set
    ("tab", "nope", ["g1", "g2", "p1", "t1"], ["gp", "pp", "tp"]),
])
def test_resolution_is_ordered_union_without_duplicates(tab: str | None, subtab: str | None, tools: list[str],
                                                        payloads: list[str]) -> None:
    with swapped(payloads=PAYLOADS, tools=TOOLS, pages={"pg": PAGE}):
        resolved = resolve("pg", tab, subtab)
        assert resolved.tool_names == tools and resolved.payload_names == payloads


def test_unknown_page_gets_the_global_set() -> None:
    with swapped(payloads=PAYLOADS, tools=TOOLS, pages={"pg": PAGE}):
        resolved = resolve("elsewhere", "tab", "sub")
        assert resolved.page is None and resolved.tool_names == ["g1", "g2"] and resolved.payload_names == ["gp"]


SCREENING_TOOLS = ["get_screening_trial", "find_screening_sites", "propose_profile_edit", "propose_screening",
                   "create_screening_report"]


@pytest.mark.parametrize(("context", "extra"), [
    (None, []), ({}, []), ({"screening": None}, []), ({"other": 1}, []),
    ({"screening": {"patient_id": 3}}, ["p1"]),
])
def test_context_tools_join_only_while_the_context_holds_their_key(context: dict[str, Any] | None,
                                                                  extra: list[str]) -> None:
    page = PageConfig(page="pg", context_builder=lambda c: "", tools=("g1",), context_tools={"screening": ("p1",)})
    with swapped(payloads=PAYLOADS, tools=TOOLS, pages={"pg": page}):
        assert resolve("pg", context=context).tool_names == ["g1", "g2", *extra]


def test_trialscout_offers_the_screening_tools_only_with_a_patient_loaded(admin: TestClient) -> None:
    """The turn's tools follow the page context: no patient, no screening tools (the preview shows a turn's)."""
    load_builtins()
    bare = {"current_page": "trialscout", "trials": []}
    loaded = {**bare, "screening": {"patient_id": 1, "label": "Ms A"}}
    tools = {name: admin.post("/api/chat/prompt-preview", json={"context": ctx}).json()["tools"]
             for name, ctx in (("bare", bare), ("loaded", loaded))}
    assert not set(SCREENING_TOOLS) & set(tools["bare"]) and "search_trials" in tools["bare"]
    assert tools["loaded"] == [*tools["bare"], *SCREENING_TOOLS]
    page = admin.get("/api/pages").json()["pages"]["trialscout"]
    assert page["context_tools"] == {"screening": SCREENING_TOOLS} and page["tools"] == tools["bare"]


def test_a_dangling_context_tool_fails_validation() -> None:
    page = PageConfig(page="x", context_builder=lambda c: "", context_tools={"screening": ("ghost",)})
    with pytest.raises(RegistryError, match=r"page 'x' \(context screening\) names unknown tool 'ghost'"):
        with swapped(payloads=PAYLOADS, tools=TOOLS, pages={"x": page}):
            pass


@pytest.mark.parametrize(("pages", "message"), [
    ({"x": PageConfig(page="x", context_builder=lambda c: "", tools=("ghost",))},
     "page 'x' (page) names unknown tool 'ghost'"),
    ({"x": PageConfig(page="x", context_builder=lambda c: "",
                      tabs={"a": TabConfig(subtabs={"b": SubTabConfig(payloads=("nope",))})})},
     "page 'x' (tab a / subtab b) names unknown payload 'nope'"),
])
def test_dangling_names_fail_validation_with_the_culprit(pages: dict[str, Any], message: str) -> None:
    with pytest.raises(RegistryError, match=message.replace("(", r"\(").replace(")", r"\)")):
        with swapped(payloads=PAYLOADS, tools=TOOLS, pages=pages):
            pass


def test_app_startup_fails_on_a_dangling_name(tmp_path: Any) -> None:
    load_builtins()
    bad = PageConfig(page="broken", context_builder=lambda c: "", payloads=("missing_card",))
    with swapped(pages={**REGISTRY.pages}, validate=False):
        REGISTRY.pages["broken"] = bad
        REGISTRY.frozen = False
        with pytest.raises(RegistryError, match="page 'broken' .* unknown payload 'missing_card'"):
            create_app(Settings(DATABASE_URL=f"sqlite:///{tmp_path}/x.db"))


def test_frozen_registry_refuses_registration_and_duplicates() -> None:
    load_builtins()
    with pytest.raises(RegistryError, match="frozen"):
        REGISTRY.add("tools", "late", tool("late"))
    with swapped():
        REGISTRY.frozen = False
        with pytest.raises(RegistryError, match="duplicate tool name 'get_staged_items'"):
            REGISTRY.add("tools", "get_staged_items", tool("get_staged_items"))


@pytest.mark.parametrize(("tab", "subtab", "payloads"), [
    ("semantic", None, ["chat_instructions_suggestion", "schema_proposal", "validation_results"]),
    ("retrieval", None, ["chat_instructions_suggestion", "retrieval_proposal"]),
    ("execute", None, ["chat_instructions_suggestion", "query_suggestion"]),
    ("execute", "workbench", ["chat_instructions_suggestion", "query_suggestion", "filter_suggestion"]),
])
def test_stream_editor_page(tab: str, subtab: str | None, payloads: list[str]) -> None:
    load_builtins()
    resolved = resolve("edit_research_stream", tab, subtab)
    assert [p.name for p in resolved.payloads if not p.is_global] == payloads


EDITOR_GLOBALS = ["pubmed_search_results", "chat_instructions_suggestion"]


@pytest.mark.parametrize(("tab", "subtab", "payloads"), [
    (None, None, EDITOR_GLOBALS),
    ("semantic", None, [*EDITOR_GLOBALS, "schema_proposal", "validation_results"]),
    ("retrieval", None, [*EDITOR_GLOBALS, "retrieval_proposal"]),
    ("execute", None, [*EDITOR_GLOBALS, "query_suggestion"]),
    ("execute", "workbench", [*EDITOR_GLOBALS, "query_suggestion", "filter_suggestion"]),
    ("semantic", "workbench", [*EDITOR_GLOBALS, "schema_proposal", "validation_results"]),  # not its subtab
])
def test_stream_editor_tools_and_payloads_in_the_preview(admin: TestClient, tab: str | None, subtab: str | None,
                                                        payloads: list[str]) -> None:
    """Each tab and the workbench subtab resolve to the expected names, and the admin preview shows exactly
    those (the tools are the global search_pubmed only: the editor's tabs add cards, not tools)."""
    load_builtins()
    resolved = resolve("edit_research_stream", tab, subtab)
    assert resolved.tool_names == ["search_pubmed"] and resolved.payload_names == payloads
    params = {k: v for k, v in {"page": "edit_research_stream", "tab": tab, "subtab": subtab}.items() if v}
    shown = admin.get("/api/chat/prompt-preview", params=params).json()
    assert (shown["page"], shown["tools"], shown["payloads"]) == ("edit_research_stream", ["search_pubmed"], payloads)
    cards = [p for p in resolved.llm_payloads if p.llm_instructions]
    assert cards and all(p.llm_instructions.strip() in shown["system_prompt"] for p in cards)


def test_pages_endpoint_shows_the_resolved_registry(alice: TestClient) -> None:
    body = alice.get("/api/pages").json()
    editor = body["pages"]["edit_research_stream"]
    assert editor["app"] == "kh"
    assert editor["tabs"]["execute"]["subtabs"]["workbench"]["payloads"][-1] == "filter_suggestion"
    assert "schema_proposal" in body["payload_types"]


def test_pages_endpoint_serves_each_page_client_actions_with_their_data(alice: TestClient) -> None:
    """The one list of client actions a page's frontend implements (the frontend's tests read the same list
    from the OpenAPI document's `x-page-registry`)."""
    pages = alice.get("/api/pages").json()["pages"]
    actions = {name: {a["action"]: a["data"] for a in page["client_actions"]} for name, page in pages.items()}
    assert actions["trialscout"] == {"run_search": [], "open_trial": ["nct_id"], "clear_form": [],
                                     "next_page": [], "previous_page": []}
    assert actions["tablizer"] == {"run_query": ["query"], "open_article": ["pmid"], "save_snapshot": [],
                                   "next_page": [], "previous_page": []}
    assert actions["edit_research_stream"] == {"switch_tab": ["tab"]}


def test_a_page_declaring_a_client_action_twice_stops_the_registry() -> None:
    load_builtins()
    page = PageConfig(page="twice", context_builder=lambda ctx: "", client_actions=(
        ClientAction("open", "a"), ClientAction("open", "b")))
    with pytest.raises(RegistryError, match="page 'twice' declares a client action twice"), \
            swapped(pages={**REGISTRY.pages, "twice": page}):
        pass


def test_pages_endpoint_serves_each_pages_starter_prompts(alice: TestClient) -> None:
    """The empty chat tray offers these: every app page the tray opens on has some, as plain strings."""
    pages = alice.get("/api/pages").json()["pages"]
    for name in ("tablizer", "trialscout", "edit_research_stream"):
        prompts = pages[name]["starter_prompts"]
        assert prompts and all(isinstance(p, str) and p.strip() for p in prompts), name
    assert "PubMed" in pages["tablizer"]["starter_prompts"][0]
