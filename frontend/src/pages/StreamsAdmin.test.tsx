import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { InstructionVersion, Stream } from "../api/types";
import { ask, openApp } from "../test/app";
import { type Call, checkAfterEach, json, recordingFetch, sse } from "../test/http";

const V1 = "Name the EGFR mutation.";
const V2 = "Name the EGFR mutation.\nSplit on-target resistance from bypass tracks.";

function stream(over: Partial<Stream> = {}): Stream {
  return {
    id: 1,
    name: "EGFR-resistant NSCLC",
    description: "Resistance to EGFR TKIs",
    chat_instructions: V2,
    settings: { pubmed_query: "EGFR AND resistance", trial_search: { condition: "nsclc", status: ["RECRUITING"] } },
    archived: false,
    created_at: "2026-01-01T10:00:00Z",
    updated_at: "2026-01-02T10:00:00Z",
    updated_by: "admin",
    current_version_id: 12,
    current_version_number: 2,
    version_count: 2,
    ...over,
  };
}

/** Version `number` of stream 1; its id is global (other streams' versions took the ids in between). */
const version = (number: number, text: string, note: string, current: boolean): InstructionVersion => ({
  id: number + 10,
  number,
  stream_id: 1,
  text,
  note,
  created_by: number === 1 ? "alice" : "admin",
  created_at: `2026-01-0${number}T10:00:00Z`,
  current,
});

let calls: Call[];
let current: Stream;
let versions: InstructionVersion[];
/** What the next PATCH answers instead of succeeding. */
let patchFailure: Response | null;

const archived = stream({ id: 4, name: "Statins (2019 review)", archived: true, chat_instructions: "Report ARR.", current_version_id: 7, current_version_number: 1, version_count: 1 });

beforeEach(() => {
  calls = [];
  current = stream();
  versions = [version(2, V2, "Split the tracks", true), version(1, V1, "First draft", false)];
  patchFailure = null;
  vi.spyOn(console, "error");
  vi.stubGlobal(
    "fetch",
    recordingFetch(calls, ({ method, url, body }) => {
      if (url === "/api/auth/session") return json({ user: { id: 2, username: "admin", role: "admin" } });
      if (url === "/api/health") return json({ status: "ok", llm: { mode: "demo", label: "demo model" } });
      if (url.startsWith("/api/conversations?")) return json([]);
      if (url === "/api/streams") return json([current]);
      if (url === "/api/streams?include_archived=true") return json([current, archived]);
      if (url === "/api/streams/1" && method === "GET") return json(current);
      if (url === "/api/streams/1" && method === "PATCH") {
        if (patchFailure) return patchFailure;
        const { expected_version_id: _expected, note: _note, ...changes } = body;
        const next: Stream = { ...current, ...changes };
        if ("chat_instructions" in body) {
          const added = version(versions.length + 1, body.chat_instructions, body.note ?? null, true);
          versions = [added, ...versions.map((v) => ({ ...v, current: false }))];
          next.current_version_id = added.id;
          next.current_version_number = added.number;
          next.version_count = versions.length;
        }
        current = next;
        return json(current);
      }
      if (url === "/api/streams/1/instructions/history") return json(versions);
      if (url.startsWith("/api/streams/1/instructions/diff")) {
        return json({
          from_version: versions[1],
          to_version: versions[0],
          unified: "",
          lines: [
            { op: "context", text: "Name the EGFR mutation.", old_line: 1, new_line: 1 },
            { op: "add", text: "Split on-target resistance from bypass tracks.", old_line: null, new_line: 2 },
          ],
          added: 1,
          removed: 0,
        });
      }
      if (url === "/api/streams/1/instructions/restore") {
        const old = versions.find((v) => v.id === body.version_id)!;
        versions = [version(3, old.text ?? "", `Restored version ${old.number}: ${body.note}`, true), ...versions.map((v) => ({ ...v, current: false }))];
        current = { ...current, chat_instructions: old.text, current_version_id: 13, current_version_number: 3, version_count: 3 };
        return json(current);
      }
      if (url.startsWith("/api/chat/prompt-preview")) {
        const draft = new URL(url, "http://x").searchParams.get("draft");
        return json({
          system_prompt: `You are Colleague.\n\n## Instructions for the research stream "EGFR-resistant NSCLC"\n${draft ?? current.chat_instructions}\n\n<page_context page="tablizer">\n</page_context>`,
          system_blocks: [],
          notices: draft != null ? ["Sandbox: draft instructions are used for this turn only."] : [],
          stream: { id: 1, name: "EGFR-resistant NSCLC", version_id: draft != null ? null : 12, version_number: draft != null ? null : 2, draft: draft != null, applied: true },
          page: "tablizer",
          tools: ["search_pubmed", "get_staged_items"],
          payloads: ["pubmed_query_suggestion", "ai_column_suggestion"],
        });
      }
      if (url === "/api/chat/stream") return sse(nextTurn);
      if (url.includes("/decision")) return json({ ok: true });
      return json({ error: "not_found", detail: "no route" }, 404);
    }),
  );
});

checkAfterEach();

let nextTurn: Array<Record<string, unknown>> = [];

async function openStreams(path = "/streams?id=1") {
  await openApp(path, "streams-page");
}

async function openInstructions() {
  await openStreams();
  fireEvent.click(await screen.findByTestId("stream-tab-instructions"));
  return screen.getByTestId("instructions-editor") as HTMLTextAreaElement;
}

const patches = () => calls.filter((c) => c.method === "PATCH");

describe("Streams admin", () => {
  it("lists the streams, and the archived ones on request", async () => {
    await openStreams("/streams");
    expect((await screen.findAllByTestId("stream-item")).map((a) => a.textContent)).toEqual([expect.stringContaining("EGFR-resistant NSCLC")]);
    fireEvent.click(screen.getByTestId("streams-show-archived"));
    await waitFor(() => expect(screen.getAllByTestId("stream-item")).toHaveLength(2));
    expect(screen.getAllByTestId("stream-item")[1].textContent).toContain("archived");
    expect(calls.some((c) => c.url === "/api/streams?include_archived=true")).toBe(true);
    fireEvent.click(screen.getAllByTestId("stream-item")[0]);
    expect((await screen.findByTestId("stream-title")).textContent).toBe("EGFR-resistant NSCLC");
    expect(window.location.search).toBe("?id=1");
  });

  it("saves the definition and the retrieval defaults, sending only what changed", async () => {
    await openStreams();
    fireEvent.change(await screen.findByTestId("stream-name"), { target: { value: "EGFR resistance" } });
    fireEvent.click(screen.getByTestId("stream-tab-retrieval"));
    fireEvent.change(screen.getByTestId("stream-pubmed-query"), { target: { value: "osimertinib resistance" } });
    fireEvent.click(screen.getByTestId("stream-trial-phase-PHASE3"));
    fireEvent.click(screen.getByTestId("details-save"));
    expect((await screen.findByTestId("details-status")).textContent).toBe("Saved.");
    expect(patches()[0].body).toEqual({
      name: "EGFR resistance",
      settings: { pubmed_query: "osimertinib resistance", trial_search: { condition: "nsclc", phase: ["PHASE3"], status: ["RECRUITING"] } },
    });
    expect(screen.getByTestId("stream-title").textContent).toBe("EGFR resistance");
  });

  it("shows a 422's readable message", async () => {
    await openStreams();
    patchFailure = json({ error: "invalid_input", detail: [{ loc: ["body", "name"], msg: "name must not be empty." }] }, 422);
    fireEvent.change(await screen.findByTestId("stream-name"), { target: { value: " x " } });
    fireEvent.click(screen.getByTestId("details-save"));
    expect((await screen.findByTestId("details-error")).textContent).toBe("name: name must not be empty.");
  });

  it("archives a stream", async () => {
    await openStreams();
    fireEvent.click(await screen.findByTestId("stream-archive"));
    await screen.findByTestId("stream-archived-badge");
    expect(patches()[0].body).toEqual({ archived: true });
    expect(screen.getByTestId("stream-archive").textContent).toBe("Unarchive");
  });

  it("saves instructions with a note and the version they build on, then shows the new version in the history", async () => {
    const editor = await openInstructions();
    expect(editor.value).toBe(V2);
    expect(screen.getByTestId("instructions-state").textContent).toContain("saved as v2");
    fireEvent.change(editor, { target: { value: `${V2}\nFlag prior osimertinib.` } });
    expect(screen.getByTestId("instructions-state").textContent).toContain("unsaved changes");
    fireEvent.change(screen.getByTestId("instructions-note"), { target: { value: "Osimertinib rule" } });
    fireEvent.click(screen.getByTestId("instructions-save"));
    expect((await screen.findByTestId("instructions-status")).textContent).toBe("Saved as v3.");
    expect(patches()[0].body).toEqual({ chat_instructions: `${V2}\nFlag prior osimertinib.`, note: "Osimertinib rule", expected_version_id: 12 });
    await waitFor(() => expect(screen.getAllByTestId("history-row")).toHaveLength(3));
    const newest = screen.getAllByTestId("history-row")[0];
    expect(newest.textContent).toContain("v3");
    expect(newest.textContent).toContain("Osimertinib rule");
    expect(within(newest).getByTestId("history-current")).toBeTruthy();
    expect((screen.getByTestId("instructions-note") as HTMLInputElement).value).toBe("");
  });

  it("on a 409 says someone else changed them, reloads theirs and offers the admin's text back", async () => {
    const editor = await openInstructions();
    fireEvent.change(editor, { target: { value: "My edit" } });
    patchFailure = json({ error: "conflict", detail: "The instructions were changed since version 2 (the current version is 3)." }, 409);
    // Someone else saved v3 meanwhile.
    current = { ...current, chat_instructions: "Their edit", current_version_id: 13, current_version_number: 3, version_count: 3 };
    fireEvent.click(screen.getByTestId("instructions-save"));
    const conflict = await screen.findByTestId("instructions-conflict");
    expect(conflict.textContent).toContain("Someone else changed these instructions");
    expect(conflict.textContent).toMatch(/Reload to see their version/);
    expect(editor.value).toBe("My edit");
    fireEvent.click(screen.getByTestId("conflict-reload"));
    expect((await screen.findByTestId("conflict-mine")).textContent).toBe("My edit");
    expect((screen.getByTestId("instructions-editor") as HTMLTextAreaElement).value).toBe("Their edit");
    fireEvent.click(screen.getByTestId("conflict-use-mine"));
    expect((screen.getByTestId("instructions-editor") as HTMLTextAreaElement).value).toBe("My edit");
    // The next save builds on their version.
    patchFailure = null;
    fireEvent.click(screen.getByTestId("instructions-save"));
    await screen.findByTestId("instructions-status");
    expect(patches()[1].body).toMatchObject({ chat_instructions: "My edit", expected_version_id: 13 });
  });

  it("shows the history (who, when, note, current), a diff between versions, and restores a version with a note", async () => {
    await openInstructions();
    const rows = await screen.findAllByTestId("history-row");
    expect(rows).toHaveLength(2);
    expect(rows[0].textContent).toContain("admin");
    expect(rows[0].textContent).toContain("Split the tracks");
    expect(within(rows[0]).getByTestId("history-current")).toBeTruthy();
    expect(rows[1].textContent).toContain("alice");
    expect(rows[1].textContent).toContain("First draft");
    expect(within(rows[1]).queryByTestId("history-current")).toBeNull();

    fireEvent.change(screen.getByTestId("diff-from"), { target: { value: "11" } });
    fireEvent.click(screen.getByTestId("diff-show"));
    await screen.findByTestId("diff-view");
    expect(calls.some((c) => c.url === "/api/streams/1/instructions/diff?from=11&to=12")).toBe(true);
    expect(screen.getByTestId("diff-added").textContent).toBe("+1");
    expect(screen.getByTestId("diff-line-add").textContent).toContain("Split on-target resistance");
    expect(screen.getAllByTestId("diff-line-context")).toHaveLength(1);

    fireEvent.click(within(rows[1]).getByTestId("history-restore"));
    fireEvent.change(screen.getByTestId("restore-note"), { target: { value: "too long" } });
    fireEvent.click(screen.getByTestId("restore-confirm"));
    expect((await screen.findByTestId("instructions-status")).textContent).toBe("Restored v1 as v3.");
    expect(calls.find((c) => c.url.endsWith("/restore"))?.body).toEqual({ version_id: 11, note: "too long" });
    expect((screen.getByTestId("instructions-editor") as HTMLTextAreaElement).value).toBe(V1);
    await waitFor(() => expect(screen.getAllByTestId("history-row")).toHaveLength(3));
    expect(screen.getAllByTestId("history-row")[0].textContent).toContain("Restored version 1: too long");
    // The sidebar's count is fresh after a restore, as after a save.
    await waitFor(() => expect(screen.getAllByTestId("stream-item")[0].textContent).toContain("3 versions"));
  });

  it("previews the composed prompt with the unsaved draft, and for the editor page's tabs", async () => {
    const editor = await openInstructions();
    fireEvent.change(editor, { target: { value: "Draft rule & more" } });
    fireEvent.click(screen.getByTestId("preview-run"));
    expect((await screen.findByTestId("preview-stream-section")).textContent).toContain("Draft rule & more");
    expect(calls.some((c) => c.url === "/api/chat/prompt-preview?page=tablizer&stream_id=1&draft=Draft%20rule%20%26%20more")).toBe(true);
    expect(screen.getByTestId("preview-tools").textContent).toBe("search_pubmed, get_staged_items");
    expect(screen.getByTestId("preview-payloads").textContent).toContain("pubmed_query_suggestion");
    expect(screen.getByTestId("preview-notice").textContent).toContain("Sandbox");
    expect(screen.getByTestId("preview-prompt").textContent).toContain("You are Colleague.");

    fireEvent.click(screen.getByTestId("preview-use-draft"));
    fireEvent.change(screen.getByTestId("preview-page"), { target: { value: "edit_research_stream" } });
    fireEvent.change(screen.getByTestId("preview-tab"), { target: { value: "execute" } });
    fireEvent.change(screen.getByTestId("preview-subtab"), { target: { value: "workbench" } });
    fireEvent.click(screen.getByTestId("preview-run"));
    await waitFor(() =>
      expect(calls.some((c) => c.url === "/api/chat/prompt-preview?page=edit_research_stream&tab=execute&subtab=workbench&stream_id=1")).toBe(true),
    );
    await waitFor(() => expect(screen.getByTestId("preview-stream-section").textContent).toContain("bypass tracks"));
  });

  it("Try draft opens a sandbox chat whose turns carry the draft for the chosen page", async () => {
    const editor = await openInstructions();
    fireEvent.change(editor, { target: { value: "Sandbox rule" } });
    fireEvent.change(screen.getByTestId("preview-page"), { target: { value: "trialscout" } });
    fireEvent.click(screen.getByTestId("try-draft"));
    expect((await screen.findByTestId("sandbox-banner")).textContent).toContain("TrialScout");
    nextTurn = [
      { type: "conversation", conversation_id: 9, turn_id: "t", user_message_id: 1, stream: { id: 1, name: "EGFR-resistant NSCLC", version_id: null, draft: true, applied: true } },
      { type: "status", message: "Sandbox: draft instructions are used for this turn only.", notice: true },
      { type: "status", message: "Thinking…" },
      { type: "complete", payload: { message: "Arr.", payloads: [], conversation_id: 9, message_id: 2, status: "complete" } },
    ];
    const input = screen.getByTestId("chat-input");
    fireEvent.change(input, { target: { value: "hi" } });
    fireEvent.keyDown(input, { key: "Enter" });
    expect((await screen.findByTestId("stream-badge")).textContent).toBe("Stream: EGFR-resistant NSCLC draft");
    expect(screen.getByTestId("chat-notice").textContent).toContain("Sandbox");
    const sent = calls.find((c) => c.url === "/api/chat/stream")!.body;
    expect(sent).toEqual({
      message: "hi",
      app: "kh",
      context: { current_page: "trialscout", stream_id: 1, stream_draft_instructions: "Sandbox rule" },
    });
    // A sandbox conversation is not reopened later as the editor's chat.
    expect(localStorage.getItem("colleague.conversation.kh")).toBeNull();
    fireEvent.click(screen.getByTestId("sandbox-exit"));
    await waitFor(() => expect(screen.queryByTestId("sandbox-banner")).toBeNull());
    expect(screen.getByTestId("chat-tray")).toBeTruthy();
  });

  it("the editor's own chat sends the editor context, and a chat_instructions_suggestion's Accept fills the editor", async () => {
    await openStreams();
    await screen.findByTestId("stream-title");
    nextTurn = [
      { type: "conversation", conversation_id: 4, turn_id: "t", user_message_id: 1, stream: { id: 1, name: "EGFR-resistant NSCLC", version_id: 12, version_number: 2, draft: false, applied: true } },
      {
        type: "complete",
        payload: {
          message: "Here is a tighter version.",
          payloads: [{ id: "ci1", type: "chat_instructions_suggestion", data: { instructions: "Be brief.\nName mutations.", explanation: "Shorter" }, source: "llm" }],
          conversation_id: 4,
          message_id: 2,
          status: "complete",
        },
      },
    ];
    await ask("improve the instructions");
    const card = await screen.findByTestId("card-chat_instructions_suggestion");
    const sent = calls.find((c) => c.url === "/api/chat/stream")!.body;
    expect(sent.app).toBe("kh");
    expect(sent.context).toMatchObject({
      current_page: "edit_research_stream",
      active_tab: "semantic",
      stream_id: 1,
      stream: { name: "EGFR-resistant NSCLC" },
      current_schema: { name: "EGFR-resistant NSCLC", description: "Resistance to EGFR TKIs" },
      chat_instructions_draft: V2,
    });
    expect(screen.getByTestId("stream-badge").textContent).toBe("Stream: EGFR-resistant NSCLC instructions v2");
    fireEvent.click(within(card).getByTestId("card-accept"));
    await screen.findByTestId("card-decision");
    expect((screen.getByTestId("instructions-editor") as HTMLTextAreaElement).value).toBe("Be brief.\nName mutations.");
    expect(screen.getByTestId("stream-tab-instructions").getAttribute("aria-selected")).toBe("true");
    expect(calls.some((c) => c.url === "/api/conversations/4/payloads/ci1/decision")).toBe(true);
    expect(patches()).toHaveLength(0);
  });

  it("the editor's cards fill its forms on Accept (unsaved), and switch_tab switches the tab", async () => {
    await openStreams();
    await screen.findByTestId("stream-title");
    nextTurn = [
      { type: "conversation", conversation_id: 4, turn_id: "t", user_message_id: 1 },
      {
        type: "complete",
        payload: {
          message: "Two ideas.",
          payloads: [
            { id: "q1", type: "query_suggestion", data: { query: "EGFR AND osimertinib", explanation: "Narrower" }, source: "llm" },
            { id: "f1", type: "filter_suggestion", data: { field: "year", operator: "gte", value: 2020 }, source: "llm" },
          ],
          suggested_actions: [{ label: "Show the instructions", action: "switch_tab", handler: "client", data: { tab: "instructions" } }],
          conversation_id: 4,
          message_id: 2,
          status: "complete",
        },
      },
    ];
    await ask("a better query, recent only");
    fireEvent.click(within(await screen.findByTestId("card-query_suggestion")).getByTestId("card-accept"));
    await within(screen.getByTestId("card-query_suggestion")).findByTestId("card-decision");
    expect(screen.getByTestId("stream-tab-retrieval").getAttribute("aria-selected")).toBe("true");
    expect((screen.getByTestId("stream-pubmed-query") as HTMLTextAreaElement).value).toBe("EGFR AND osimertinib");
    fireEvent.click(within(screen.getByTestId("card-filter_suggestion")).getByTestId("card-accept"));
    await within(screen.getByTestId("card-filter_suggestion")).findByTestId("card-decision");
    expect((screen.getByTestId("stream-pubmed-query") as HTMLTextAreaElement).value).toBe("(EGFR AND osimertinib) AND 2020:3000[dp]");
    expect(screen.getByText("Unsaved changes")).toBeTruthy();
    fireEvent.click(screen.getByTestId("suggested-action"));
    expect(screen.getByTestId("stream-tab-instructions").getAttribute("aria-selected")).toBe("true");
    expect(patches()).toHaveLength(0);
  });

  it("creates a stream", async () => {
    await openStreams("/streams");
    fireEvent.click(await screen.findByTestId("stream-new"));
    vi.mocked(fetch).mockImplementationOnce(async (url, init) => {
      calls.push({ method: String(init?.method), url: String(url), body: JSON.parse(String(init?.body)) });
      return json(stream({ id: 1, name: "New one" }), 201);
    });
    fireEvent.change(await screen.findByTestId("create-name"), { target: { value: "New one" } });
    fireEvent.change(screen.getByTestId("create-instructions"), { target: { value: "Be kind." } });
    fireEvent.change(screen.getByTestId("create-note"), { target: { value: "start" } });
    fireEvent.click(screen.getByTestId("create-submit"));
    await waitFor(() => expect(window.location.search).toBe("?id=1"));
    expect(calls.find((c) => c.method === "POST" && c.url === "/api/streams")?.body).toEqual({
      name: "New one",
      description: null,
      chat_instructions: "Be kind.",
      note: "start",
    });
    await screen.findByTestId("stream-title");
  });

  it("switches editor tabs with the arrow keys", async () => {
    await openStreams();
    const first = await screen.findByTestId("stream-tab-semantic");
    first.focus();
    fireEvent.keyDown(first, { key: "ArrowRight" });
    expect(document.activeElement).toBe(screen.getByTestId("stream-tab-retrieval"));
    expect(screen.getByTestId("stream-pubmed-query")).toBeTruthy();
    fireEvent.keyDown(document.activeElement!, { key: "ArrowLeft" });
    expect(screen.getByTestId("stream-name")).toBeTruthy();
  });
});
