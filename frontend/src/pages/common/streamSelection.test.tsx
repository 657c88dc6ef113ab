import { fireEvent, screen } from "@testing-library/react";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { ask, openApp } from "../../test/app";
import { checkAfterEach, json, sse } from "../../test/http";

const streams = [
  {
    id: 1,
    name: "EGFR-resistant NSCLC",
    description: "EGFR TKI resistance",
    chat_instructions: "Name the mutation.",
    settings: { pubmed_query: "EGFR AND resistance", trial_search: { condition: "nsclc", intervention: "osimertinib", status: ["RECRUITING"] } },
    archived: false,
    created_at: "",
    updated_at: "",
    updated_by: "admin",
    current_version_id: 3,
    version_count: 2,
  },
  { id: 2, name: "Melanoma", description: null, chat_instructions: null, settings: {}, archived: false, created_at: "", updated_at: "", updated_by: null, current_version_id: null, version_count: 0 },
];

let chatBodies: Array<{ app: string; context: Record<string, unknown> }>;
let nextTurn: Array<Record<string, unknown>>;

beforeEach(() => {
  chatBodies = [];
  nextTurn = [
    { type: "conversation", conversation_id: 3, turn_id: "t", user_message_id: 1, stream: { id: 1, name: "EGFR-resistant NSCLC", version_id: 13, version_number: 3, draft: false, applied: true } },
    { type: "status", message: "Thinking…" },
    { type: "complete", payload: { message: "Sure.", payloads: [], conversation_id: 3, message_id: 2, status: "complete" } },
  ];
  vi.spyOn(console, "error");
  vi.stubGlobal(
    "fetch",
    vi.fn(async (url: string, init: RequestInit = {}) => {
      if (url === "/api/auth/session") return json({ user: { id: 1, username: "demo", role: "user" } });
      if (url === "/api/health") return json({ status: "ok" });
      if (url === "/api/streams") return json(streams);
      if (url.startsWith("/api/conversations?")) return json([]);
      if (url === "/api/chat/stream") {
        chatBodies.push(JSON.parse(String(init.body)));
        return sse(nextTurn);
      }
      return json({ error: "not_found", detail: "nope" }, 404);
    }),
  );
});

checkAfterEach();

async function openWithStreams(path: string) {
  await openApp(path);
  // The page's other selects have options too: wait for the streams themselves.
  await screen.findByRole("option", { name: "EGFR-resistant NSCLC" });
}

const select = () => screen.getByTestId("stream-select") as HTMLSelectElement;

describe("stream selector", () => {
  it("Tablizer: No stream by default; the chosen stream travels in the chat context and the tray shows it", async () => {
    await openWithStreams("/tablizer");
    expect(select().value).toBe("");
    expect(screen.getByRole("option", { name: "No stream" })).toBeTruthy();
    fireEvent.change(select(), { target: { value: "1" } });
    expect(localStorage.getItem("colleague.stream.tablizer")).toBe("1");
    await ask("what matters here?");
    expect((await screen.findByTestId("stream-badge")).textContent).toBe("Stream: EGFR-resistant NSCLC instructions v3");
    expect(chatBodies[0].context).toMatchObject({ current_page: "tablizer", stream_id: 1 });
    expect(screen.getByTestId("message-context").textContent).toContain('"stream_id": 1');
  });

  it("Tablizer: without a stream the context has no stream_id; the stream's query loads only on request", async () => {
    await openWithStreams("/tablizer");
    fireEvent.change(select(), { target: { value: "1" } });
    expect((screen.getByTestId("tablizer-query") as HTMLInputElement).value).toBe("");
    fireEvent.click(screen.getByTestId("stream-load-defaults"));
    expect((screen.getByTestId("tablizer-query") as HTMLInputElement).value).toBe("EGFR AND resistance");
    fireEvent.change(select(), { target: { value: "2" } });
    expect(screen.queryByTestId("stream-load-defaults")).toBeNull();
    fireEvent.change(select(), { target: { value: "" } });
    expect(localStorage.getItem("colleague.stream.tablizer")).toBeNull();
    nextTurn = [nextTurn[0], nextTurn[2]].map((e) => (e.type === "conversation" ? { ...e, stream: undefined } : e));
    await ask("hello");
    await screen.findByText("Sure.");
    expect(chatBodies[0].context).not.toHaveProperty("stream_id");
    expect(screen.queryByTestId("stream-badge")).toBeNull();
  });

  it("TrialScout remembers its own choice, and loads the stream's trial search into the form", async () => {
    localStorage.setItem("colleague.stream.tablizer", "2");
    localStorage.setItem("colleague.stream.trialscout", "1");
    await openWithStreams("/trialscout");
    expect(select().value).toBe("1");
    fireEvent.click(screen.getByTestId("stream-load-defaults"));
    expect((screen.getByTestId("trial-condition") as HTMLInputElement).value).toBe("nsclc");
    expect((screen.getByTestId("trial-intervention") as HTMLInputElement).value).toBe("osimertinib");
    expect((screen.getByTestId("trial-status-RECRUITING") as HTMLInputElement).checked).toBe(true);
    await ask("trials?");
    await screen.findByTestId("stream-badge");
    expect(chatBodies[0]).toMatchObject({ app: "trialscout", context: { current_page: "trialscout", stream_id: 1 } });
  });

  it("keeps a remembered stream that is no longer listed, says so, and shows the chat's notice", async () => {
    localStorage.setItem("colleague.stream.tablizer", "9");
    nextTurn = [
      { type: "conversation", conversation_id: 3, turn_id: "t", user_message_id: 1 },
      { type: "status", message: "Research stream 9 does not exist; no stream instructions are applied.", notice: true },
      { type: "status", message: "Thinking…" },
      { type: "complete", payload: { message: "Sure.", payloads: [], conversation_id: 3, message_id: 2, status: "complete" } },
    ];
    await openWithStreams("/tablizer");
    expect(select().value).toBe("9");
    expect(screen.getByTestId("stream-missing")).toBeTruthy();
    await ask("hi");
    expect((await screen.findByTestId("chat-notice")).textContent).toContain("does not exist");
    expect(chatBodies[0].context).toMatchObject({ stream_id: 9 });
  });
});
