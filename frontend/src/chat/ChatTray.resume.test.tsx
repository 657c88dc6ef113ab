/** The tray and a turn that outlives its connection: idempotent sends, resume, reload, giving up. */
import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ChatTray } from "./ChatTray";
import { announceRedacted } from "./redacted";
import { RETRY_DELAYS_MS } from "./turnStream";
import { json } from "../test/http";

type Request = { method: string; url: string; headers: Record<string, string>; body: unknown };
type Handler = (request: Request) => Response | Promise<Response>;

const ANSWER = "Try this query for PMID 123.";
const turn = (conversationId = 5): Array<Record<string, unknown>> => [
  { type: "conversation", conversation_id: conversationId, turn_id: "t", user_message_id: 10 },
  { type: "status", message: "Thinking…" },
  { type: "text_delta", text: "Try this query" },
  { type: "text_delta", text: " for PMID 123." },
  {
    type: "complete",
    payload: { message: ANSWER, payloads: [], conversation_id: conversationId, message_id: 11, status: "complete" },
  },
];

const frames = (events: Array<Record<string, unknown>>, firstId: number) =>
  events.map((e, i) => `id: ${firstId + i}\r\nevent: ${e.type}\r\ndata: ${JSON.stringify(e)}\r\n\r\n`).join("");

/** An SSE body the test writes to as it goes. */
function controlled() {
  let stream!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (stream = c) });
  return {
    response: () => new Response(body, { headers: { "Content-Type": "text/event-stream" } }),
    write: (text: string) => stream.enqueue(new TextEncoder().encode(text)),
    push(events: Array<Record<string, unknown>>, firstId: number) {
      this.write(frames(events, firstId));
    },
    close: () => stream.close(),
  };
}

const sse = (events: Array<Record<string, unknown>>, firstId = 1, tail = "") =>
  new Response(frames(events, firstId) + tail, { headers: { "Content-Type": "text/event-stream" } });

const stored = (status: string, content: string) => ({
  id: 5,
  app: "tablizer",
  title: "EGFR",
  messages: [
    { id: 10, role: "user", content: "Find EGFR papers", context: { current_page: "tablizer" }, extras: {}, status: "complete" },
    { id: 11, role: "assistant", content, context: null, extras: { turn_id: "t" }, status },
  ],
});

let requests: Request[];
let routes: Record<string, Handler[]>;

/** Queue answers for `METHOD url`; a route with nothing queued answers 404. */
function answer(route: string, ...handlers: Handler[]) {
  (routes[route] ??= []).push(...handlers);
}
const to = (route: string) => requests.filter((r) => `${r.method} ${r.url}` === route);
const offline: Handler = () => Promise.reject(new TypeError("Failed to fetch"));

beforeEach(() => {
  requests = [];
  routes = {};
  vi.stubGlobal(
    "fetch",
    vi.fn(async (url: string, init: RequestInit = {}) => {
      const request = {
        method: init.method ?? "GET",
        url,
        headers: { ...(init.headers as Record<string, string>) },
        body: init.body ? JSON.parse(String(init.body)) : undefined,
      };
      requests.push(request);
      if (url.startsWith("/api/conversations?")) return json([]);
      const handler = routes[`${request.method} ${url}`]?.shift();
      return handler ? handler(request) : json({ error: "not_found", detail: "no route" }, 404);
    }),
  );
});

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
  localStorage.clear();
  sessionStorage.clear();
});

function setup() {
  return render(
    <ChatTray
      binding={{ app: "tablizer", getContext: () => ({ current_page: "tablizer" }), payloadHandlers: {}, clientActions: {}, onEntity: vi.fn() }}
      onClose={vi.fn()}
    />,
  );
}

function sendMessage(text: string) {
  const input = screen.getByTestId("chat-input");
  fireEvent.change(input, { target: { value: text } });
  fireEvent.keyDown(input, { key: "Enter" });
}

const answerText = () => screen.getAllByTestId("message-assistant").at(-1)!.querySelector(".markdown")?.textContent ?? "";
const statusLine = () => screen.getByTestId("chat-status").textContent ?? "";
/** Past every reconnect's wait (fake timers). */
const outlastBackoff = () => act(() => vi.advanceTimersByTimeAsync(RETRY_DELAYS_MS.reduce((a, b) => a + b, 0) + 1000));

describe("idempotent sends", () => {
  it("every send carries a fresh Idempotency-Key; Retry after a failed turn gets a new one", async () => {
    answer("POST /api/chat/stream", () => sse(turn()), () => sse([...turn().slice(0, 2), { type: "error", message: "Overloaded", retryable: true }]));
    answer("POST /api/chat/stream", () => sse(turn()));
    setup();
    sendMessage("one");
    await waitFor(() => expect(answerText()).toBe(ANSWER));
    sendMessage("two");
    fireEvent.click(await screen.findByTestId("chat-retry"));
    await waitFor(() => expect(to("POST /api/chat/stream")).toHaveLength(3));
    const keys = to("POST /api/chat/stream").map((r) => r.headers["Idempotency-Key"]);
    expect(keys.every((k) => /^[0-9a-f-]{36}$/.test(k))).toBe(true);
    expect(new Set(keys).size).toBe(3);
  });

  it("a send that cannot reach the server is retried under the same key, and so is Retry after giving up", async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    answer("POST /api/chat/stream", ...Array.from({ length: RETRY_DELAYS_MS.length + 1 }, () => offline));
    answer("POST /api/chat/stream", () => sse(turn()));
    setup();
    sendMessage("Find EGFR papers");
    await waitFor(() => expect(statusLine()).toContain("Reconnecting…"));
    await outlastBackoff();
    expect((await screen.findByTestId("chat-error")).textContent).toContain("Could not reach the server");
    expect(to("POST /api/chat/stream")).toHaveLength(RETRY_DELAYS_MS.length + 1);
    fireEvent.click(screen.getByTestId("chat-retry"));
    await waitFor(() => expect(answerText()).toBe(ANSWER));
    const posts = to("POST /api/chat/stream");
    expect(new Set(posts.map((r) => r.headers["Idempotency-Key"])).size).toBe(1);
    expect(new Set(posts.map((r) => JSON.stringify(r.body))).size).toBe(1);
    expect(screen.getAllByTestId("message-user")).toHaveLength(1);
  });
});

/** A resume of the turn the tray was reading names it (its `conversation` event's `turn_id`). */
const NAMED = "GET /api/conversations/5/stream?turn_id=t";

describe("resume", () => {
  it("a reconnect event (server restart) resumes from the last id once retry_ms has passed", async () => {
    const farewell = 'event: reconnect\r\ndata: {"message":"Restarting","retry_ms":10,"type":"reconnect"}\r\n\r\n';
    answer("POST /api/chat/stream", () => sse(turn().slice(0, 3), 1, farewell));
    answer(NAMED, () => sse(turn().slice(3), 4));
    setup();
    sendMessage("Find EGFR papers");
    await waitFor(() => expect(screen.queryByTestId("chat-stop")).toBeNull());
    expect(answerText()).toBe(ANSWER);
    expect(to(NAMED).map((r) => r.headers["Last-Event-ID"])).toEqual(["3"]);
    expect(screen.queryByTestId("chat-error")).toBeNull();
  });

  it("a turn ended as interrupted after its server died shows the stored answer, not text it never stored", async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    // The server sent " for PM" (event 4), died before storing it; the stream breaks without an end.
    answer("POST /api/chat/stream", () => sse([...turn().slice(0, 3), { type: "text_delta", text: " for PM" }]));
    const ended = [
      { type: "resync", after: 3, text: "Try this query" },
      { type: "error", message: "The answer was interrupted.", code: "interrupted", retryable: true },
    ];
    answer(NAMED, () => sse(ended, 1004));
    setup();
    sendMessage("Find EGFR papers");
    await waitFor(() => expect(to(NAMED)).toHaveLength(1), { timeout: 5000 });
    expect(await screen.findByTestId("message-interrupted")).toBeTruthy();
    expect(answerText()).toBe("Try this query");
    expect(to(NAMED)[0].headers["Last-Event-ID"]).toBe("4");
  });

  it("after a reload, a running answer shows its text so far with Stop, and the replay finishes it without doubling", async () => {
    localStorage.setItem("colleague.conversation.tablizer", "5");
    answer("GET /api/conversations/5", () => json(stored("running", "Try this query")));
    const replay = controlled();
    answer("GET /api/conversations/5/stream", replay.response);
    setup();
    await waitFor(() => expect(answerText()).toBe("Try this query"));
    expect(screen.getByTestId("chat-stop")).toBeTruthy();
    expect(screen.getByTestId("chat-status")).toBeTruthy();
    await waitFor(() => expect(to("GET /api/conversations/5/stream")).toHaveLength(1));
    expect(to("GET /api/conversations/5/stream")[0].headers["Last-Event-ID"]).toBe("0");
    replay.push(turn().slice(0, 3), 1);
    await waitFor(() => expect(statusLine()).toContain("Thinking…"));
    expect(answerText()).toBe("Try this query");
    replay.push(turn().slice(3, 4), 4);
    await waitFor(() => expect(answerText()).toBe(ANSWER));
    replay.push(turn().slice(4), 5);
    replay.close();
    await screen.findByTestId("chat-send");
    expect(answerText()).toBe(ANSWER);
    expect(screen.getAllByTestId("message-assistant")).toHaveLength(1);
    expect(screen.getAllByTestId("message-user")).toHaveLength(1);
    expect(to("POST /api/chat/stream")).toHaveLength(0);
  });

  it("Stop on a resumed answer stops its turn on the server", async () => {
    localStorage.setItem("colleague.conversation.tablizer", "5");
    answer("GET /api/conversations/5", () => json(stored("running", "Half")));
    const replay = controlled();
    answer("GET /api/conversations/5/stream", replay.response);
    answer("POST /api/conversations/5/stop", () => json({ stopped: true }));
    setup();
    fireEvent.click(await screen.findByTestId("chat-stop"));
    expect(await screen.findByTestId("message-interrupted")).toBeTruthy();
    await waitFor(() => expect(to("POST /api/conversations/5/stop")).toHaveLength(1));
  });

  it("gives up after the backoff with the answer interrupted and a Retry that looks the turn up again", async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    answer("POST /api/chat/stream", () => sse(turn().slice(0, 3)));
    const unavailable = () => json({ error: "unavailable", detail: "restarting" }, 503);
    answer(NAMED, ...Array.from({ length: RETRY_DELAYS_MS.length }, () => unavailable));
    setup();
    sendMessage("Find EGFR papers");
    await waitFor(() => expect(statusLine()).toContain("Reconnecting…"));
    await outlastBackoff();
    expect((await screen.findByTestId("chat-error")).textContent).toContain("Lost the connection");
    expect(screen.getByTestId("message-interrupted")).toBeTruthy();
    expect(answerText()).toBe("Try this query");
    expect(to(NAMED).map((r) => r.headers["Last-Event-ID"])).toEqual(
      RETRY_DELAYS_MS.map(() => "3"),
    );

    // Still offline: Retry keeps offering to look the turn up (it never re-sends the question).
    answer("GET /api/conversations/5", offline);
    fireEvent.click(screen.getByTestId("chat-retry"));
    await waitFor(() => expect(to("GET /api/conversations/5")).toHaveLength(1));
    await waitFor(() => expect(screen.getByTestId("chat-error").textContent).toContain("Could not reach the server"));
    expect(screen.getByTestId("chat-error").textContent).toContain("Lost the connection");

    // The turn finished meanwhile: Retry shows what the server stored, and sends nothing.
    answer("GET /api/conversations/5", () => json(stored("complete", ANSWER)));
    fireEvent.click(screen.getByTestId("chat-retry"));
    await waitFor(() => expect(answerText()).toBe(ANSWER));
    expect(screen.queryByTestId("chat-error")).toBeNull();
    expect(screen.queryByTestId("message-interrupted")).toBeNull();
    expect(to("POST /api/chat/stream")).toHaveLength(1);
  });

  it("the tab becoming visible again after the connection was given up resumes a turn still running", async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    answer("POST /api/chat/stream", () => sse(turn().slice(0, 3)));
    answer(NAMED, ...Array.from({ length: RETRY_DELAYS_MS.length }, () => offline));
    setup();
    sendMessage("Find EGFR papers");
    await outlastBackoff();
    await screen.findByTestId("chat-error");

    answer("GET /api/conversations/5", () => json(stored("running", "Try this query")));
    answer("GET /api/conversations/5/stream", () => sse(turn(), 1));
    act(() => void document.dispatchEvent(new Event("visibilitychange")));
    await waitFor(() => expect(answerText()).toBe(ANSWER));
    await screen.findByTestId("chat-send");
    expect(screen.queryByTestId("chat-error")).toBeNull();
    expect(to("GET /api/conversations/5/stream").at(-1)!.headers["Last-Event-ID"]).toBe("0");
  });

  it("an open conversation redacted on the server (a patient deleted) is shown again as stored", async () => {
    answer("POST /api/chat/stream", () => sse(turn()));
    setup();
    sendMessage("Find EGFR papers");
    await waitFor(() => expect(answerText()).toBe(ANSWER));
    expect(screen.getByTestId("message-context")).toBeTruthy();
    // As the server stores a redacted turn: placeholders, and the question's page context gone (null).
    const redacted = stored("complete", "[Removed: about a deleted patient.]");
    const [question, ...rest] = redacted.messages;
    const messages = [{ ...question, content: "[Removed: sent with a deleted patient.]", context: null }, ...rest];
    answer("GET /api/conversations/5", () => json({ ...redacted, messages }));
    act(() => announceRedacted());
    await waitFor(() => expect(answerText()).toBe("[Removed: about a deleted patient.]"));
    expect(screen.getByTestId("message-user").textContent).toContain("[Removed: sent with a deleted patient.]");
    expect(screen.queryByTestId("message-context")).toBeNull(); // no "What the assistant saw" for what went
    expect(to("GET /api/conversations/5")).toHaveLength(1);
  });

  it("opening a conversation from the list resumes its running answer", async () => {
    vi.mocked(fetch).mockImplementationOnce(async () => json([]));
    setup();
    answer("GET /api/conversations/5", () => json(stored("running", "Try")));
    answer("GET /api/conversations/5/stream", () => sse(turn(), 1));
    vi.mocked(fetch).mockImplementationOnce(async () =>
      json([{ id: 5, app: "tablizer", title: "EGFR", created_at: "", updated_at: "" }]),
    );
    fireEvent.click(screen.getByTestId("conversations-toggle"));
    fireEvent.click(await screen.findByText("EGFR"));
    await waitFor(() => expect(answerText()).toBe(ANSWER));
    expect(to("GET /api/conversations/5/stream")).toHaveLength(1);
  });

  it("a tray closed before the first event (switching app) picks the send up again: same key, same turn", async () => {
    const silent = controlled(); // the server has the turn but has sent nothing yet
    answer("POST /api/chat/stream", silent.response, () => sse(turn()));
    const first = setup();
    sendMessage("Find EGFR papers");
    await waitFor(() => expect(to("POST /api/chat/stream")).toHaveLength(1));
    first.unmount(); // to TrialScout: this tray goes away without knowing its conversation
    expect(localStorage.getItem("colleague.conversation.tablizer")).toBeNull();

    setup(); // back on Tablizer
    await waitFor(() => expect(answerText()).toBe(ANSWER));
    const posts = to("POST /api/chat/stream");
    expect(posts).toHaveLength(2);
    expect(posts[1].headers["Idempotency-Key"]).toBe(posts[0].headers["Idempotency-Key"]);
    expect(posts[1].body).toEqual(posts[0].body);
    expect(screen.getAllByTestId("message-user")).toHaveLength(1);
    expect(screen.getByTestId("message-user").textContent).toContain("Find EGFR papers");
    // Remembered once the turn has ended, which can be a render after its text is on screen.
    await waitFor(() => expect(localStorage.getItem("colleague.conversation.tablizer")).toBe("5"));
    expect(sessionStorage.getItem("colleague.pending-send.tablizer")).toBeNull();
  });

  it("a send that named its conversation is reopened, never sent again; a link to another conversation drops a pending send", async () => {
    answer("POST /api/chat/stream", () => sse(turn()));
    const first = setup();
    sendMessage("Find EGFR papers");
    await waitFor(() => expect(answerText()).toBe(ANSWER));
    first.unmount();
    answer("GET /api/conversations/5", () => json(stored("complete", ANSWER)));
    setup();
    await waitFor(() => expect(answerText()).toBe(ANSWER));
    expect(to("POST /api/chat/stream")).toHaveLength(1);

    cleanup();
    sessionStorage.setItem("colleague.pending-send.tablizer", JSON.stringify({ key: "k", body: { message: "old", context: {}, app: "tablizer" } }));
    window.history.replaceState(null, "", "/tablizer?chat=1&c=5");
    try {
      answer("GET /api/conversations/5", () => json(stored("complete", ANSWER)));
      setup();
      await waitFor(() => expect(answerText()).toBe(ANSWER));
      expect(to("POST /api/chat/stream")).toHaveLength(1);
      expect(sessionStorage.getItem("colleague.pending-send.tablizer")).toBeNull();
    } finally {
      window.history.replaceState(null, "", "/");
    }
  });
});
