import { act, cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ChatTray, type PageChatBinding } from "./ChatTray";
import { type Call, json, recordingFetch } from "../test/http";

/** An SSE body of `events`, numbered from `firstId` as a turn's log numbers them. */
function sse(events: Array<Record<string, unknown>>, keepOpen = false, firstId = 1): Response {
  const text = events.map((e, i) => `id: ${firstId + i}\r\nevent: ${e.type}\r\ndata: ${JSON.stringify(e)}\r\n\r\n`).join("");
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text));
      if (!keepOpen) controller.close();
    },
  });
  return new Response(body, { status: 200, headers: { "Content-Type": "text/event-stream" } });
}

/** An SSE body the test writes to as it goes: `push(events, firstId)`, then `close()`. */
function controlled() {
  let stream!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (stream = c) });
  return {
    response: () => new Response(body, { status: 200, headers: { "Content-Type": "text/event-stream" } }),
    push(events: Array<Record<string, unknown>>, firstId: number) {
      const text = events.map((e, i) => `id: ${firstId + i}\r\nevent: ${e.type}\r\ndata: ${JSON.stringify(e)}\r\n\r\n`);
      stream.enqueue(new TextEncoder().encode(text.join("")));
    },
    close: () => stream.close(),
  };
}

const sonnet = { model: "claude-sonnet-4-6", model_label: "Sonnet 4.6", max_tokens: 16384, compaction: true, context_window: 200000 };
const models = {
  models: [
    { id: "claude-sonnet-4-6", label: "Sonnet 4.6", context_window: 200000 },
    { id: "claude-opus-4-6", label: "Opus 4.6", context_window: 200000 },
  ],
  default: sonnet,
  max_tokens_range: [256, 64000],
  demo: false,
};

const suggestion = { id: "p1", type: "pubmed_query_suggestion", data: { query: "egfr[MeSH]", explanation: "EGFR" }, source: "llm" };

const turn = (over: Record<string, unknown> = {}) => [
  { type: "conversation", conversation_id: 5, turn_id: "t", user_message_id: 10 },
  { type: "status", message: "Thinking…" },
  { type: "text_delta", text: "Try this query for PMID 123." },
  { type: "usage", input_tokens: 1500, output_tokens: 40, cache_read_input_tokens: 500, cache_creation_input_tokens: 0, context_window: 200000 },
  { type: "context_update", input_tokens: 2000, context_window: 200000, model: "claude-sonnet-4-6", turns: 1, compaction: true },
  {
    type: "complete",
    payload: {
      message: "Try this query for PMID 123.",
      payloads: [suggestion],
      suggested_values: [{ label: "Narrower", value: "Make it narrower" }],
      suggested_actions: [
        { label: "Open it", action: "open_article", handler: "client", data: { pmid: "123" } },
        { label: "Open a trial", action: "open_trial", handler: "client", data: { nct_id: "NCT01234567" } },
        { label: "Analyse", action: "analyse_results", handler: "server", data: { top: 3 } },
      ],
      conversation_id: 5,
      message_id: 11,
      status: "complete",
      ...over,
    },
  },
];

let calls: Call[];
/** The headers of each request, in the order of `calls`. */
let headers: Array<Record<string, string>>;
let streamResponses: Array<() => Response>;
/** Answers to `GET /api/conversations/{id}/stream` (a resume); 404 when none is left. */
let resumeResponses: Array<() => Response>;

beforeEach(() => {
  calls = [];
  headers = [];
  streamResponses = [];
  resumeResponses = [];
  vi.stubGlobal(
    "fetch",
    recordingFetch(calls, ({ method, url, body }, init) => {
      headers.push({ ...(init.headers as Record<string, string>) });
      if (url === "/api/chat/stream") return (streamResponses.shift() ?? (() => sse(turn())))();
      if (/^\/api\/conversations\/\d+\/stream(\?turn_id=\w+)?$/.test(url)) {
        return (resumeResponses.shift() ?? (() => json({ error: "not_found", detail: "no turn" }, 404)))();
      }
      if (url.startsWith("/api/conversations?")) return json([{ id: 5, app: "tablizer", title: "EGFR", created_at: "", updated_at: "" }]);
      if (url === "/api/chat/models") return json(models);
      if (/^\/api\/conversations\/\d+\/config$/.test(url)) {
        if (method === "GET") return json(sonnet);
        const b = body as Record<string, unknown>;
        const label = models.models.find((m) => m.id === b.model)?.label;
        return json({ ...sonnet, ...b, model_label: label, type: "config_ack", conversation_id: 5 });
      }
      if (url.endsWith("/stop")) return json({ stopped: true });
      if (url.includes("/decision")) return json({ ok: true });
      return json({ error: "not_found", detail: "no route" }, 404);
    }),
  );
});

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const DEMO = { text: "demo model", demo: true };

function setup(over: Partial<PageChatBinding> = {}, modelLabel: { text: string; demo: boolean } | null = DEMO) {
  const binding: PageChatBinding = {
    app: "tablizer",
    getContext: () => ({ current_page: "tablizer", query: "egfr" }),
    payloadHandlers: { pubmed_query_suggestion: vi.fn() },
    clientActions: { open_article: { run: vi.fn() } },
    onEntity: vi.fn(),
    ...over,
  };
  const onClose = vi.fn();
  render(<ChatTray binding={binding} onClose={onClose} modelLabel={modelLabel} />);
  return { binding, onClose };
}

/** The turn under way has ended (no Stop button): a message sent before then is not sent. */
async function turnEnded() {
  await waitFor(() => expect(screen.queryByTestId("chat-stop")).toBeNull());
}

async function sendMessage(text: string) {
  const input = screen.getByTestId("chat-input");
  fireEvent.change(input, { target: { value: text } });
  fireEvent.keyDown(input, { key: "Enter" });
}

const streamCalls = () => calls.filter((c) => c.url === "/api/chat/stream");
const requestsTo = (url: string) => calls.flatMap((c, i) => (c.url === url ? [{ ...c, headers: headers[i] }] : []));

describe("ChatTray", () => {
  it("sends with Enter, streams the answer and shows cards, usage and the context that was sent", async () => {
    setup();
    // One control says the demo model answers and opens the settings: no separate badge beside it.
    expect(screen.getByTestId("model-label").textContent).toBe("demo model");
    expect(screen.getByTestId("chat-settings-toggle").contains(screen.getByTestId("model-label"))).toBe(true);
    expect(screen.getAllByText("demo model")).toHaveLength(1);
    await sendMessage("Find EGFR papers");
    await screen.findByTestId("card-pubmed_query_suggestion");
    expect(streamCalls()).toHaveLength(1);
    expect(streamCalls()[0].body).toEqual({ message: "Find EGFR papers", context: { current_page: "tablizer", query: "egfr" }, app: "tablizer" });
    expect(screen.getByTestId("message-assistant").textContent).toContain("Try this query");
    expect(screen.getByTestId("context-meter").textContent).toContain("Context 2.0k / 200k · 1%");
    expect(screen.queryByTestId("context-warning")).toBeNull();
    expect(within(screen.getByTestId("message-context")).getByText(/"query": "egfr"/)).toBeTruthy();
    expect((screen.getByTestId("chat-input") as HTMLTextAreaElement).value).toBe("");
  });

  it("shows the last request's input as the context, not the turn's sum, and warns when the window nearly fills", async () => {
    streamResponses.push(() =>
      sse(
        turn().map((e) =>
          e.type === "usage"
            ? { ...e, input_tokens: 90000, cache_read_input_tokens: 90000 } // the turn's cost: 180k over two calls
            : e.type === "context_update"
              ? { ...e, input_tokens: 170000, compaction: false }
              : e,
        ),
      ),
    );
    setup();
    await sendMessage("long");
    await screen.findByTestId("card-pubmed_query_suggestion");
    expect(screen.getByTestId("context-meter").textContent).toContain("Context 170k / 200k · 85%");
    expect(screen.getByTestId("context-warning").textContent).toContain("start a new conversation or turn compaction on");
  });

  it("settings chosen before the first message go with it; later ones are stored and acknowledged", async () => {
    setup({}, { text: "Sonnet 4.6", demo: false });
    expect(screen.queryByTestId("model-label")).toBeNull();
    fireEvent.click(await screen.findByTestId("chat-settings-toggle"));
    await screen.findByTestId("chat-settings");
    fireEvent.change(screen.getByTestId("chat-settings-model"), { target: { value: "claude-opus-4-6" } });
    fireEvent.change(screen.getByTestId("chat-settings-max-tokens"), { target: { value: "2048" } });
    fireEvent.click(screen.getByTestId("chat-settings-save"));
    expect(screen.getByTestId("chat-settings-toggle").textContent).toContain("Opus 4.6");
    await sendMessage("one");
    await screen.findByTestId("card-pubmed_query_suggestion");
    expect((streamCalls()[0].body as Record<string, unknown>).config).toEqual({
      model: "claude-opus-4-6",
      max_tokens: 2048,
      compaction: true,
    });

    fireEvent.click(screen.getByTestId("chat-settings-toggle"));
    await screen.findByTestId("chat-settings");
    fireEvent.click(screen.getByTestId("chat-settings-compaction"));
    fireEvent.click(screen.getByTestId("chat-settings-save"));
    await waitFor(() => expect(requestsTo("/api/conversations/5/config").some((c) => c.method === "PATCH")).toBe(true));
    const patch = requestsTo("/api/conversations/5/config").find((c) => c.method === "PATCH");
    expect(patch?.body).toMatchObject({ compaction: false });
    expect((await screen.findByTestId("chat-settings-note")).textContent).toContain("compaction off");
    fireEvent.click(screen.getByTestId("suggested-value"));
    await waitFor(() => expect(streamCalls()).toHaveLength(2));
    expect((streamCalls()[1].body as Record<string, unknown>).config).toBeUndefined();
  });

  it("sends the next turn in the same conversation", async () => {
    setup();
    await sendMessage("one");
    await screen.findByTestId("card-pubmed_query_suggestion");
    fireEvent.click(screen.getByTestId("suggested-value"));
    await waitFor(() => expect(streamCalls()).toHaveLength(2));
    expect(streamCalls()[1].body).toMatchObject({ message: "Make it narrower", conversation_id: 5 });
  });

  it("Accept applies the suggestion through the page and records the decision", async () => {
    const { binding } = setup();
    await sendMessage("q");
    fireEvent.click(await screen.findByTestId("card-accept"));
    await screen.findByTestId("card-decision");
    expect(binding.payloadHandlers.pubmed_query_suggestion).toHaveBeenCalledWith(suggestion.data, undefined);
    expect(calls.find((c) => c.url.includes("/decision"))).toEqual({
      method: "POST",
      url: "/api/conversations/5/payloads/p1/decision",
      body: { decision: "accepted" },
    });
  });

  it("Dismiss records the decision without touching the page", async () => {
    const { binding } = setup();
    await sendMessage("q");
    fireEvent.click(await screen.findByTestId("card-dismiss"));
    expect((await screen.findByTestId("card-decision")).textContent).toContain("Dismissed");
    expect(binding.payloadHandlers.pubmed_query_suggestion).not.toHaveBeenCalled();
    expect(calls.find((c) => c.url.includes("/decision"))?.body).toEqual({ decision: "dismissed" });
  });

  it("runs client actions on the page with their data and sends server actions back as actions", async () => {
    const { binding } = setup();
    await sendMessage("q");
    const [client, elsewhere, server] = (await screen.findAllByTestId("suggested-action")) as HTMLButtonElement[];
    fireEvent.click(client);
    expect(binding.clientActions.open_article.run).toHaveBeenCalledWith({ pmid: "123" });
    // An action this page has no handler for is greyed, never run.
    expect(elsewhere.disabled).toBe(true);
    expect(server.disabled).toBe(false);
    fireEvent.click(server);
    await waitFor(() => expect(streamCalls()).toHaveLength(2));
    expect(streamCalls()[1].body).toMatchObject({
      message: "Analyse",
      conversation_id: 5,
      action: { action: "analyse_results", data: { top: 3 } },
    });
    expect(screen.getAllByTestId("message-user")[1].textContent).toContain("Analyse");
  });

  it("links PMIDs in the answer to the page", async () => {
    const { binding } = setup();
    await sendMessage("q");
    fireEvent.click(await screen.findByTestId("entity-link"));
    expect(binding.onEntity).toHaveBeenCalledWith("pmid", "123");
  });

  it("Stop keeps the partial answer, tells the server, and never re-sends", async () => {
    streamResponses.push(() => sse(turn().slice(0, 3), true));
    setup();
    await sendMessage("long question");
    await waitFor(() => expect(screen.getByTestId("message-assistant").textContent).toContain("Try this query"));
    fireEvent.click(screen.getByTestId("chat-stop"));
    expect(await screen.findByTestId("message-interrupted")).toBeTruthy();
    expect(screen.getByTestId("message-assistant").textContent).toContain("Try this query");
    await waitFor(() => expect(calls.some((c) => c.method === "POST" && c.url === "/api/conversations/5/stop")).toBe(true));
    expect(screen.getByTestId("chat-send")).toBeTruthy();
    expect(streamCalls()).toHaveLength(1);
  });

  it("Stop before the conversation is known stops it once the stream names it", async () => {
    let push!: (text: string) => void;
    streamResponses.push(
      () =>
        new Response(new ReadableStream<Uint8Array>({ start: (c) => void (push = (t) => c.enqueue(new TextEncoder().encode(t))) }), {
          headers: { "Content-Type": "text/event-stream" },
        }),
    );
    setup();
    await sendMessage("new conversation");
    fireEvent.click(await screen.findByTestId("chat-stop"));
    expect(await screen.findByTestId("message-interrupted")).toBeTruthy();
    expect(calls.some((c) => c.url.endsWith("/stop"))).toBe(false);
    push('event: conversation\r\ndata: {"type":"conversation","conversation_id":8,"turn_id":"t","user_message_id":1}\r\n\r\n');
    push('event: text_delta\r\ndata: {"type":"text_delta","text":"ignored"}\r\n\r\n');
    await waitFor(() => expect(calls.some((c) => c.method === "POST" && c.url === "/api/conversations/8/stop")).toBe(true));
    expect(screen.getByTestId("message-assistant").textContent).not.toContain("ignored");
  });

  it("shows an error event with Retry, and Retry sends the same message again", async () => {
    streamResponses.push(() =>
      sse([
        { type: "conversation", conversation_id: 5, turn_id: "t", user_message_id: 10 },
        { type: "text_delta", text: "Part" },
        { type: "error", message: "The model is overloaded", code: "overloaded", retryable: true },
      ]),
    );
    setup();
    await sendMessage("Find trials");
    expect((await screen.findByTestId("chat-error")).textContent).toContain("The model is overloaded");
    expect(streamCalls()).toHaveLength(1);
    fireEvent.click(screen.getByTestId("chat-retry"));
    await screen.findByTestId("card-pubmed_query_suggestion");
    expect(streamCalls()).toHaveLength(2);
    expect(streamCalls()[1].body).toMatchObject({ message: "Find trials", conversation_id: 5 });
    expect(screen.queryByTestId("chat-error")).toBeNull();
    expect(screen.getAllByTestId("message-user")).toHaveLength(1);
  });

  it("shows an HTTP error's detail", async () => {
    streamResponses.push(() => json({ error: "conflict", detail: "Another turn is running in this conversation" }, 409));
    setup();
    await sendMessage("x");
    expect((await screen.findByTestId("chat-error")).textContent).toContain("Another turn is running");
  });

  it("a stream that ends before complete resumes after the last event id and shows the answer once", async () => {
    streamResponses.push(() => sse(turn().slice(0, 3)));
    const resumed = controlled();
    resumeResponses.push(resumed.response);
    setup();
    await sendMessage("x");
    await waitFor(() => expect(screen.getByTestId("chat-status").textContent).toContain("Reconnecting…"));
    // …of the turn it was reading (named, so a newer turn is never read from its middle).
    await waitFor(() => expect(requestsTo("/api/conversations/5/stream?turn_id=t")).toHaveLength(1));
    expect(requestsTo("/api/conversations/5/stream?turn_id=t")[0]).toMatchObject({ method: "GET", headers: { "Last-Event-ID": "3" } });
    // The server may resend what this reader saw (ids 2 and 3): it is not applied twice.
    resumed.push(turn().slice(1, 4), 2);
    await waitFor(() => expect(screen.getByTestId("chat-status").textContent).toContain("Thinking…"));
    expect(screen.getByTestId("message-assistant").textContent!.match(/Try this query/g)).toHaveLength(1);
    expect(screen.getByTestId("chat-stop")).toBeTruthy();
    resumed.push(turn().slice(4), 5);
    resumed.close();
    await screen.findByTestId("card-pubmed_query_suggestion");
    expect(screen.getByTestId("message-assistant").textContent!.match(/Try this query/g)).toHaveLength(1);
    expect(streamCalls()).toHaveLength(1);
    expect(screen.queryByTestId("chat-error")).toBeNull();
  });

  it("Shift+Enter does not send; Escape leaves the box keeping the draft, a second Escape closes the tray", async () => {
    const { onClose } = setup();
    const input = screen.getByTestId("chat-input");
    fireEvent.change(input, { target: { value: "draft" } });
    fireEvent.keyDown(input, { key: "Enter", shiftKey: true });
    fireEvent.keyDown(input, { key: "Escape" });
    expect(onClose).not.toHaveBeenCalled();
    expect(document.activeElement).toBe(screen.getByTestId("chat-tray"));
    expect((input as HTMLTextAreaElement).value).toBe("draft");
    fireEvent.keyDown(screen.getByTestId("chat-tray"), { key: "Escape" });
    expect(onClose).toHaveBeenCalled();
    await act(async () => undefined);
    expect(streamCalls()).toHaveLength(0);
    expect(localStorage.getItem("colleague.draft.tablizer.new")).toBe("draft"); // kept for the next tray
  });

  it("reopens the conversation that was open before a reload", async () => {
    localStorage.setItem("colleague.conversation.tablizer", "5");
    vi.mocked(fetch).mockImplementation(async (url) => {
      calls.push({ method: "GET", url: String(url), body: undefined });
      if (String(url) === "/api/conversations/5") {
        return json({ id: 5, app: "tablizer", title: "EGFR", messages: [{ id: 1, role: "user", content: "earlier question", context: {}, extras: {}, status: "complete" }] });
      }
      return json([]);
    });
    setup();
    expect(await screen.findByText("earlier question")).toBeTruthy();
    await waitFor(() => expect(localStorage.getItem("colleague.conversation.tablizer")).toBe("5"));
  });

  it("opens a stored conversation with its decisions from the history list", async () => {
    vi.mocked(fetch).mockImplementation(async (url) => {
      calls.push({ method: "GET", url: String(url), body: undefined });
      if (String(url).startsWith("/api/conversations?")) return json([{ id: 5, app: "tablizer", title: "EGFR", created_at: "", updated_at: "" }]);
      return json({
        id: 5,
        app: "tablizer",
        title: "EGFR",
        messages: [
          { id: 1, role: "user", content: "q", context: { current_page: "tablizer" }, extras: {}, status: "complete" },
          { id: 2, role: "assistant", content: "a", context: null, extras: { payloads: [{ ...suggestion, decision: "accepted" }] }, status: "complete" },
        ],
      });
    });
    setup();
    fireEvent.click(screen.getByTestId("conversations-toggle"));
    fireEvent.click(await screen.findByText("EGFR"));
    expect((await screen.findByTestId("card-decision")).textContent).toContain("Accepted");
    expect(screen.queryByTestId("card-accept")).toBeNull();
  });
});

describe("ChatTray stream badge and notices", () => {
  const stream = { id: 1, name: "EGFR-resistant NSCLC", version_id: 17, version_number: 3, draft: false, applied: true };
  const opened = (extra: Record<string, unknown> = {}) => ({ type: "conversation", conversation_id: 5, turn_id: "t", user_message_id: 10, ...extra });

  it("shows which stream's instructions are active, from the conversation event", async () => {
    streamResponses.push(() => sse([opened({ stream }), ...turn().slice(1)]));
    setup();
    expect(screen.queryByTestId("stream-badge")).toBeNull();
    await sendMessage("q");
    await screen.findByTestId("card-pubmed_query_suggestion");
    expect(screen.getByTestId("stream-badge").textContent).toBe("Stream: EGFR-resistant NSCLC instructions v3");
    expect(screen.queryByTestId("chat-notice")).toBeNull();
  });

  it("says so when a draft is in effect, or the stream has no instructions", async () => {
    streamResponses.push(() => sse([opened({ stream: { ...stream, version_id: null, version_number: null, draft: true } }), ...turn().slice(1)]));
    streamResponses.push(() => sse([opened({ stream: { ...stream, applied: false } }), ...turn().slice(1)]));
    setup();
    await sendMessage("one");
    await screen.findByTestId("card-pubmed_query_suggestion");
    expect(screen.getByTestId("stream-badge").textContent).toBe("Stream: EGFR-resistant NSCLC draft");
    await turnEnded();
    await sendMessage("two");
    await waitFor(() => expect(screen.getByTestId("stream-badge").textContent).toBe("Stream: EGFR-resistant NSCLC no instructions"));
  });

  it("keeps the server's notices (unknown or archived stream) visible after Thinking… and the answer", async () => {
    const notice = 'Research stream "Statins" is archived; its instructions are not applied.';
    streamResponses.push(() => sse([opened(), { type: "status", message: notice, notice: true }, ...turn().slice(1)]));
    setup();
    await sendMessage("q");
    await screen.findByTestId("card-pubmed_query_suggestion");
    expect(screen.getByTestId("chat-notice").textContent).toBe(notice);
    expect(screen.queryByTestId("stream-badge")).toBeNull();
    // Later statuses (heartbeats) are status lines, not notices.
    expect(screen.getAllByTestId("chat-notice")).toHaveLength(1);
  });

  it("a turn without a stream clears the badge; a stored conversation shows its stream", async () => {
    streamResponses.push(() => sse([opened({ stream }), ...turn().slice(1)]));
    streamResponses.push(() => sse(turn()));
    setup();
    await sendMessage("one");
    await screen.findByTestId("stream-badge");
    await turnEnded();
    await sendMessage("two");
    await waitFor(() => expect(screen.getAllByTestId("message-assistant")).toHaveLength(2));
    await waitFor(() => expect(screen.queryByTestId("stream-badge")).toBeNull());
    cleanupAndReopen();
    expect((await screen.findByTestId("stream-badge")).textContent).toContain("instructions v3");
  });

  function cleanupAndReopen() {
    cleanup();
    localStorage.setItem("colleague.conversation.tablizer", "5");
    vi.mocked(fetch).mockImplementation(async (url) =>
      String(url) === "/api/conversations/5"
        ? json({
            id: 5,
            app: "tablizer",
            messages: [
              { id: 1, role: "user", content: "q", context: { current_page: "tablizer", stream_id: 1 }, extras: {}, status: "complete" },
              { id: 2, role: "assistant", content: "a", context: null, extras: { stream }, status: "complete" },
            ],
          })
        : json([]),
    );
    setup();
  }
});
