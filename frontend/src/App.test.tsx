import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { App, modelLabelOf } from "./App";
import { ask, openApp } from "./test/app";
import { checkAfterEach, json, sse } from "./test/http";

const articles = [1, 2, 3].map((i) => ({ pmid: String(100 + i), title: `Article ${i}`, journal: "J", year: 2020 + i }));
const trials = [1, 2].map((i) => ({ nct_id: `NCT0000000${i}`, title: `Trial ${i}`, phase: "PHASE3", status: "RECRUITING", enrollment: 10 * i, sponsor: "S" }));

function completeWith(payload: Record<string, unknown>) {
  return [
    { type: "conversation", conversation_id: 3, turn_id: "t", user_message_id: 1 },
    { type: "complete", payload: { message: "Here you go.", payloads: [payload], conversation_id: 3, message_id: 2, status: "complete" } },
  ];
}

let urls: string[];
let chatBodies: unknown[];
let aiBodies: unknown[];
let nextTurn: Array<Record<string, unknown>>;
let role = "user";

beforeEach(() => {
  urls = [];
  chatBodies = [];
  aiBodies = [];
  role = "user";
  vi.spyOn(console, "error");
  vi.stubGlobal(
    "fetch",
    vi.fn(async (url: string, init: RequestInit = {}) => {
      urls.push(url);
      if (url === "/api/auth/session") return json({ user: { id: 1, username: "demo", role } });
      if (url === "/api/health") return json({ status: "ok", llm: { mode: "demo", model: "d", label: "demo model" } });
      if (url.startsWith("/api/conversations?")) return json([]);
      if (url.startsWith("/api/articles/search")) return json({ articles, total_count: 3, page: 1, page_size: 25 });
      if (url.startsWith("/api/trials/search")) return json({ trials, total_count: 2, next_page_token: null });
      if (url === "/api/trials/NCT00000001") return json({ ...trials[0], eligibility_criteria: "Adults only" });
      if (url === "/api/chat/stream") {
        chatBodies.push(JSON.parse(String(init.body)));
        return sse(nextTurn);
      }
      if (url.includes("/decision")) return json({ ok: true });
      if (url === "/api/ai-columns/evaluate") {
        const body = JSON.parse(String(init.body)) as { ids: string[] };
        aiBodies.push(body);
        const values = ["MET", "NOT_MET", "UNKNOWN"];
        const rows = body.ids.map((id, i) => ({ type: "row", id, value: values[i % 3], display: ["Yes", "No", "Unknown"][i % 3], reasoning: "r", evidence: [], cached: false, model: "d" }));
        return sse([{ type: "progress", done: 0, total: rows.length }, ...rows, { type: "complete", done: rows.length, total: rows.length, counts: {}, cached: 0, model: "d" }]);
      }
      return json({ error: "not_found", detail: "nope" }, 404);
    }),
  );
});

checkAfterEach();

describe("App shell", () => {
  it("labels the demo model", () => {
    expect(modelLabelOf({ llm: { mode: "demo", model: "x", label: "demo model" } })).toEqual({ text: "demo model", demo: true });
    expect(modelLabelOf({ llm: { mode: "anthropic", model: "claude-sonnet-4-6" } })).toEqual({ text: "claude-sonnet-4-6", demo: false });
    expect(modelLabelOf(null)).toBeNull();
  });

  it("sends a signed-out user to the login page, remembering where they were", async () => {
    // The session check answers 200 {user: null}: a signed-out first load makes no request that fails.
    vi.mocked(fetch).mockImplementation(async (url) =>
      url === "/api/auth/session" ? json({ user: null }) : json({ error: "unauthorized", detail: "Not signed in" }, 401),
    );
    window.history.replaceState(null, "", "/trialscout");
    render(<App />);
    await screen.findByTestId("login-username");
    expect(window.location.pathname + window.location.search).toBe("/login?next=%2Ftrialscout");
    expect(urls).not.toContain("/api/auth/me");
  });

  it("treats a failing session check as signed out", async () => {
    vi.mocked(fetch).mockImplementation(async () => json({ error: "unauthorized", detail: "Not signed in" }, 401));
    window.history.replaceState(null, "", "/trialscout");
    render(<App />);
    await screen.findByTestId("login-username");
  });

  it("hides Streams from users", async () => {
    await openApp("/streams");
    expect(screen.queryByTestId("nav-streams")).toBeNull();
    expect(screen.queryByTestId("streams-page")).toBeNull();
    expect(screen.getByText("Not found")).toBeTruthy();
  });

  it("shows Streams to admins, and moves between pages without reloading", async () => {
    role = "admin";
    await openApp("/tablizer");
    fireEvent.click(screen.getByTestId("nav-streams"));
    expect(await screen.findByTestId("streams-page")).toBeTruthy();
    fireEvent.click(screen.getByTestId("nav-trialscout"));
    expect(await screen.findByTestId("trialscout-page")).toBeTruthy();
    expect(window.location.pathname).toBe("/trialscout");
    expect(urls.filter((u) => u === "/api/auth/session")).toHaveLength(1);
  });
});

describe("Tablizer", () => {
  it("searches, and Accept on a PubMed query card runs that query and records the decision", async () => {
    await openApp("/tablizer");
    fireEvent.change(screen.getByTestId("tablizer-query"), { target: { value: "egfr" } });
    fireEvent.click(screen.getByTestId("tablizer-search"));
    expect(await screen.findAllByTestId("result-row")).toHaveLength(3);
    nextTurn = completeWith({ id: "p1", type: "pubmed_query_suggestion", data: { query: "egfr[MeSH] AND resistance", explanation: "x" }, source: "llm" });
    await ask("better query?");
    const sent = () => chatBodies[0] as { app: string; context: Record<string, unknown> };
    await waitFor(() => expect(chatBodies).toHaveLength(1));
    expect(sent().app).toBe("tablizer");
    expect(sent().context).toMatchObject({ current_page: "tablizer", query: "egfr", total_matched: 3, loaded_count: 3 });
    expect((sent().context.articles as unknown[]).length).toBe(3);
    fireEvent.click(await screen.findByTestId("card-accept"));
    await screen.findByTestId("card-decision");
    expect((screen.getByTestId("tablizer-query") as HTMLInputElement).value).toBe("egfr[MeSH] AND resistance");
    expect(urls.filter((u) => u.startsWith("/api/articles/search")).pop()).toContain("q=egfr%5BMeSH%5D+AND+resistance");
    expect(urls).toContain("/api/conversations/3/payloads/p1/decision");
  });

  it("Accept on an AI column card adds a column that evaluates the loaded rows", async () => {
    await openApp("/tablizer");
    fireEvent.change(screen.getByTestId("tablizer-query"), { target: { value: "egfr" } });
    fireEvent.click(screen.getByTestId("tablizer-search"));
    await screen.findAllByTestId("result-row");
    nextTurn = completeWith({ id: "p2", type: "ai_column_suggestion", data: { name: "Resistance", criteria: "Mentions resistance?", type: "boolean" }, source: "llm" });
    await ask("add a column");
    fireEvent.click(await screen.findByTestId("card-accept"));
    await screen.findByTestId("card-decision");
    expect(screen.getByTestId("ai-column-chip").textContent).toContain("Resistance");
    await waitFor(() => expect(screen.getAllByTestId("ai-cell").map((c) => c.textContent)).toEqual(["Yes", "No", "Unknown"]));
    expect(aiBodies).toEqual([{ column: { name: "Resistance", criteria: "Mentions resistance?", type: "boolean" }, app: "tablizer", ids: ["101", "102", "103"], items: articles }]);
    expect(screen.getByTestId("ai-column-counts").textContent).toBe("Yes 1 · No 1 · Unknown 1");
  });

  it("saves snapshots and compares them", async () => {
    await openApp("/tablizer");
    fireEvent.change(screen.getByTestId("tablizer-query"), { target: { value: "egfr" } });
    fireEvent.click(screen.getByTestId("tablizer-search"));
    await screen.findAllByTestId("result-row");
    fireEvent.click(screen.getByTestId("snapshot-save"));
    fireEvent.click(screen.getByTestId("snapshot-save"));
    fireEvent.click(screen.getByTestId("compare-toggle"));
    expect(screen.getByTestId("compare-group-both").textContent).toContain("(3)");
    fireEvent.click(screen.getByTestId("compare-group-onlyA"));
    expect(screen.queryAllByTestId("result-row")).toHaveLength(0);
  });
});

describe("TrialScout", () => {
  it("Accept on a trial search card fills the form and runs the search", async () => {
    await openApp("/trialscout");
    nextTurn = completeWith({
      id: "p3",
      type: "trial_search_suggestion",
      data: { condition: "melanoma", phase: ["PHASE3", "PHASE2"], status: ["RECRUITING"], explanation: "x" },
      source: "llm",
    });
    await ask("find melanoma trials");
    fireEvent.click(await screen.findByTestId("card-accept"));
    expect(await screen.findAllByTestId("result-row")).toHaveLength(2);
    expect((screen.getByTestId("trial-condition") as HTMLInputElement).value).toBe("melanoma");
    expect((screen.getByTestId("trial-phase-PHASE2") as HTMLInputElement).checked).toBe(true);
    expect(urls.find((u) => u.startsWith("/api/trials/search"))).toBe(
      "/api/trials/search?condition=melanoma&phase=PHASE3&phase=PHASE2&status=RECRUITING&page_size=25",
    );
  });

  it("a deep link opens its trial and keeps it open in the URL; a pasted URL restores the search", async () => {
    await openApp("/trialscout?nct=NCT00000001&chat=1");
    const panel = await screen.findByTestId("detail-panel");
    expect(await within(panel).findByText("Adults only")).toBeTruthy();
    await waitFor(() => expect(window.location.search).toBe("?chat=1&open=NCT00000001"));
    expect(screen.getByTestId("chat-tray")).toBeTruthy();
    expect(screen.getByTestId("detail-panel")).toBeTruthy();
    cleanup();
    await openApp("/trialscout?cond=melanoma&phase=PHASE2");
    expect(await screen.findAllByTestId("result-row")).toHaveLength(2);
    expect((screen.getByTestId("trial-condition") as HTMLInputElement).value).toBe("melanoma");
    expect(urls.some((u) => u.startsWith("/api/trials/search?") && u.includes("condition=melanoma") && u.includes("phase=PHASE2"))).toBe(true);
  });

  it("opening the chat tray (another part of the URL) leaves a search form being typed alone", async () => {
    await openApp("/trialscout");
    fireEvent.change(screen.getByTestId("trial-condition"), { target: { value: "melanoma" } });
    fireEvent.click(screen.getByTestId("chat-toggle"));
    await screen.findByTestId("chat-input");
    expect(window.location.search).toBe("?chat=1");
    expect((screen.getByTestId("trial-condition") as HTMLInputElement).value).toBe("melanoma");
  });

  it("an NCT id in an answer opens the trial's detail view", async () => {
    await openApp("/trialscout");
    fireEvent.click(screen.getByTestId("trial-search"));
    await screen.findAllByTestId("result-row");
    nextTurn = [
      { type: "conversation", conversation_id: 3, turn_id: "t", user_message_id: 1 },
      { type: "complete", payload: { message: "Look at NCT00000001.", payloads: [], conversation_id: 3, message_id: 2, status: "complete" } },
    ];
    await ask("which one?");
    fireEvent.click(await screen.findByTestId("entity-link"));
    const panel = await screen.findByTestId("detail-panel");
    expect(await within(panel).findByText("Adults only")).toBeTruthy();
    const context = () => (chatBodies[0] as { context: Record<string, unknown> }).context;
    expect(context()).toMatchObject({ current_page: "trialscout", total_matched: 2, loaded_count: 2, viewer: null });
  });

  it("an NCT id clicked before the tray has written its conversation to the URL still opens the trial", async () => {
    await openApp("/trialscout");
    nextTurn = [
      { type: "conversation", conversation_id: 3, turn_id: "t", user_message_id: 1 },
      { type: "complete", payload: { message: "Look at NCT00000001.", payloads: [], conversation_id: 3, message_id: 2, status: "complete" } },
    ];
    // The click comes right after the render that shows the link, before that render's effects ran (the tray's `c=3`
    // write among them): the write lands in the same render as the opened trial, which must stay open.
    await new Promise<void>((resolve) => {
      const observer = new MutationObserver(() => {
        const link = document.querySelector('[data-testid="entity-link"]');
        if (!link) return;
        observer.disconnect();
        fireEvent.click(link);
        resolve();
      });
      observer.observe(document.body, { subtree: true, childList: true });
      void ask("which one?");
    });
    const panel = await screen.findByTestId("detail-panel");
    expect(await within(panel).findByText("Adults only")).toBeTruthy();
    await waitFor(() => expect(window.location.search).toBe("?chat=1&c=3&open=NCT00000001"));
  });
});
