"""Research streams in the browser: an admin edits a stream's chat instructions, previews the prompt, tries a
draft in the sandbox, then chats in Tablizer inside that stream and sees its instructions in effect.

Uses the shared fixtures of tests/browser/conftest.py (the real app with the demo model, a fresh browser
context per test); screenshots go to test-artifacts/browser/streams/.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import expect

from tests.browser.harness import Journey

pytestmark = pytest.mark.browser

STREAM = "EGFR-resistant NSCLC"
NEW_RULE = "- End every answer with a one-line bottom line for the tumour board."
NOTE = "Ask for a bottom line"
DRAFT_RULE = "- Draft only: mention the C797S mutation when relevant."
SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "browser" / "streams"


def _sign_in_as_admin(j: Journey, path: str) -> None:
    """Signed in as admin, back on `path`."""
    j.sign_in_as_admin(path)
    expect(j.page).to_have_url(f"{j.app.url}{path}")


def test_admin_edits_stream_instructions_and_tablizer_chats_with_them(demo_journey: Journey) -> None:
    j, page = demo_journey, demo_journey.page
    shutil.rmtree(SHOTS, ignore_errors=True)
    SHOTS.mkdir(parents=True)
    j.shots = SHOTS

    # -- the Streams page: pick the stream, edit its instructions with a note ---------------------------
    _sign_in_as_admin(j, "/streams")
    expect(page.get_by_test_id("streams-page")).to_be_visible()
    item = page.get_by_test_id("stream-item").filter(has_text=STREAM)
    stream_id = int(item.get_attribute("data-stream-id") or "0")
    item.click()
    expect(page.get_by_test_id("stream-title")).to_have_text(STREAM)
    j.shot("stream-definition")

    # Keyboard: the editor's tabs are a tablist moved with the arrow keys.
    page.get_by_test_id("stream-tab-semantic").focus()
    page.keyboard.press("ArrowLeft")
    expect(page.get_by_test_id("stream-tab-instructions")).to_be_focused()
    expect(page.get_by_test_id("stream-tab-instructions")).to_have_attribute("aria-selected", "true")

    editor = page.get_by_test_id("instructions-editor")
    before = j.api_get(f"/api/streams/{stream_id}")
    expect(editor).to_have_value(before["chat_instructions"])
    editor.fill(f"{before['chat_instructions']}\n{NEW_RULE}")
    expect(page.get_by_test_id("instructions-state")).to_contain_text("unsaved changes")
    page.get_by_label("Note (optional): why this change").fill(NOTE)
    page.get_by_test_id("instructions-save").click()
    expect(page.get_by_test_id("instructions-status")).to_have_text(re.compile(r"^Saved as v\d+\.$"))
    after = j.api_get(f"/api/streams/{stream_id}")
    version, number = after["current_version_id"], after["current_version_number"]
    assert number == before["current_version_number"] + 1  # counted within this stream
    assert version != before["current_version_id"] and after["chat_instructions"].endswith(NEW_RULE)
    newest = page.get_by_test_id("history-row").first
    expect(newest).to_contain_text(NOTE)
    expect(newest).to_contain_text("admin")
    expect(newest.get_by_test_id("history-current")).to_be_visible()
    expect(page.get_by_test_id("history-row")).to_have_count(before["version_count"] + 1)

    # The diff of the new version against the one before it: exactly our line was added.
    newest.get_by_test_id("history-changes").click()
    expect(page.get_by_test_id("diff-line-add")).to_have_text(re.compile(re.escape(NEW_RULE)))
    expect(page.get_by_test_id("diff-added")).to_have_text("+1")
    expect(page.get_by_test_id("diff-removed")).to_have_text("−0")

    # -- the prompt preview shows the saved text in the composed prompt ---------------------------------
    page.get_by_test_id("preview-page").select_option("tablizer")
    page.get_by_test_id("preview-run").click()
    expect(page.get_by_test_id("preview-stream-section")).to_contain_text(NEW_RULE)
    expect(page.get_by_test_id("preview-stream")).to_contain_text(f"saved instructions v{number}")
    expect(page.get_by_test_id("preview-tools")).to_contain_text("search_pubmed")
    page.get_by_test_id("preview-prompt-toggle").click()
    expect(page.get_by_test_id("preview-prompt")).to_contain_text(NEW_RULE)
    j.shot("instructions-saved-and-previewed")

    # -- Try draft: an unsaved line is in effect for the sandbox chat only -------------------------------
    editor.fill(f"{after['chat_instructions']}\n{DRAFT_RULE}")
    page.get_by_test_id("preview-run").click()
    expect(page.get_by_test_id("preview-stream-section")).to_contain_text(DRAFT_RULE)
    expect(page.get_by_test_id("preview-notice")).to_contain_text("Sandbox")
    page.get_by_test_id("try-draft").click()
    expect(page.get_by_test_id("sandbox-banner")).to_contain_text(STREAM)
    expect(page.get_by_test_id("chat-input")).to_be_focused()
    page.keyboard.type("Hello")
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("stream-badge")).to_have_text(f"Stream: {STREAM} draft")
    expect(page.get_by_test_id("chat-notice")).to_contain_text("Sandbox")
    expect(page.get_by_test_id("chat-send")).to_be_visible()  # the turn ended
    j.shot("sandbox-chat")
    # Nothing was saved by trying it.
    assert j.api_get(f"/api/streams/{stream_id}")["current_version_id"] == version
    page.get_by_test_id("sandbox-exit").click()
    expect(page.get_by_test_id("sandbox-banner")).to_have_count(0)
    page.get_by_test_id("chat-close").click()

    # -- Tablizer: select the stream and chat; the tray says its instructions are active -----------------
    page.get_by_test_id("nav-tablizer").click()
    expect(page.get_by_test_id("tablizer-page")).to_be_visible()
    select = page.get_by_test_id("stream-select")
    expect(select).to_have_value("")
    select.select_option(label=STREAM)
    page.get_by_test_id("stream-load-defaults").click()
    expect(page.get_by_test_id("tablizer-query")).to_have_value(after["settings"]["pubmed_query"])
    j.open_chat()
    page.keyboard.type("Hello")
    page.keyboard.press("Enter")
    badge = page.get_by_test_id("stream-badge")
    expect(badge).to_have_text(f"Stream: {STREAM} instructions v{number}")
    expect(j.last_answer()).to_contain_text(f"Working in the research stream “{STREAM}”")
    expect(page.get_by_test_id("chat-send")).to_be_visible()

    # "What the assistant saw": the context carried the stream id.
    context = page.get_by_test_id("message-context").last
    context.get_by_text("What the assistant saw").click()
    expect(context.locator("pre")).to_contain_text(f'"stream_id": {stream_id}')
    expect(context.locator("pre")).to_contain_text('"current_page": "tablizer"')
    j.shot("tablizer-chat-in-stream")

    # The stored answer keeps the stream; the choice is remembered for Tablizer across a reload.
    conversation = j.api_get(f"/api/conversations/{j.remembered_conversation('tablizer')}")
    answer = [m for m in conversation["messages"] if m["role"] == "assistant"][-1]
    assert answer["extras"]["stream"] == {"id": stream_id, "name": STREAM, "version_id": version,
                                          "version_number": number, "draft": False, "applied": True}
    page.reload()
    expect(page.get_by_test_id("stream-select")).to_have_value(str(stream_id))
    j.tray_reopened()
    expect(page.get_by_test_id("stream-badge")).to_have_text(f"Stream: {STREAM} instructions v{number}")

    # -- the prompt preview API for that stream contains the new instructions ----------------------------
    preview = j.api_get(f"/api/chat/prompt-preview?page=tablizer&stream_id={stream_id}")
    assert NEW_RULE in preview["system_prompt"]
    assert DRAFT_RULE not in preview["system_prompt"]
    assert preview["stream"] == {"id": stream_id, "name": STREAM, "version_id": version,
                                 "version_number": number, "draft": False, "applied": True}
    draft_preview = j.api_get(f"/api/chat/prompt-preview?page=tablizer&stream_id={stream_id}&draft={quote(DRAFT_RULE)}")
    assert DRAFT_RULE in draft_preview["system_prompt"] and draft_preview["stream"]["draft"] is True

    j.assert_clean()
