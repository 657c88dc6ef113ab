import { describe, expect, it } from "vitest";
// The wire contract shared with the backend tests (ARCHITECTURE.md §5).
import transcript from "../../../tests/fixtures/sse/chat_turn.sse?raw";
import { readEventStream, toChatEvent } from "../api/sse";
import type { ChatEvent, ConversationDetail } from "../api/types";
import { payloadsOf } from "./chatMessage";
import { chatReducer, initialChatState, type ChatAction, type ChatState } from "./chatReducer";

const CONTEXT = { current_page: "tablizer", query: "egfr" };

function run(...actions: ChatAction[]): ChatState {
  return actions.reduce(chatReducer, initialChatState);
}
const send = (message = "Find EGFR papers", key = "1"): ChatAction => ({ type: "send", message, context: CONTEXT, key });
const ev = (event: ChatEvent): ChatAction => ({ type: "event", event });
const last = (s: ChatState) => s.messages[s.messages.length - 1];

const complete = (over: Record<string, unknown> = {}): ChatEvent => ({
  type: "complete",
  payload: {
    message: "Here is a query.",
    payloads: [{ id: "p1", type: "pubmed_query_suggestion", data: { query: "egfr[MeSH]" }, source: "llm" }],
    suggested_values: [{ label: "Yes", value: "Yes please" }],
    suggested_actions: [{ label: "Search", action: "run_search", handler: "client" }],
    tool_history: [{ tool_name: "search_pubmed", input: {}, output: "3 found" }],
    conversation_id: 9,
    message_id: 21,
    status: "complete",
    usage: { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, context_window: 200000 },
    ...over,
  },
});

describe("send", () => {
  it("adds the user message with its context and a streaming assistant message", () => {
    const s = run(send());
    expect(s.streaming).toBe(true);
    expect(s.messages.map((m) => [m.role, m.status])).toEqual([
      ["user", "complete"],
      ["assistant", "streaming"],
    ]);
    expect(s.messages[0].context).toEqual(CONTEXT);
    expect(s.lastRequest).toEqual({ message: "Find EGFR papers", context: CONTEXT });
  });
});

describe("events", () => {
  it("conversation sets the conversation and user message ids", () => {
    const s = run(send(), ev({ type: "conversation", conversation_id: 9, turn_id: "t", user_message_id: 20 }));
    expect(s.conversationId).toBe(9);
    expect(s.messages[0].id).toBe(20);
  });

  it("status sets the status line, including heartbeats", () => {
    const s = run(send(), ev({ type: "status", message: "Thinking…" }), ev({ type: "status", message: "Still searching trials… (16s)" }));
    expect(s.statusText).toBe("Still searching trials… (16s)");
  });

  it("text_delta appends to the streaming answer", () => {
    const s = run(send(), ev({ type: "text_delta", text: "Hel" }), ev({ type: "text_delta", text: "lo" }));
    expect(last(s).content).toBe("Hello");
  });

  it("tool_start, tool_progress and tool_complete track each tool by index", () => {
    let s = run(
      send(),
      ev({ type: "tool_start", tool: "search_trials", input: { condition: "x" }, index: 0 }),
      ev({ type: "tool_progress", tool: "search_trials", index: 0, stage: "fetch", message: "Fetching", progress: 0.4 }),
      ev({ type: "tool_start", tool: "get_trial", input: {}, index: 1 }),
    );
    expect(last(s).tools).toEqual([
      { index: 0, tool: "search_trials", input: { condition: "x" }, state: "running", stage: "fetch", message: "Fetching", progress: 0.4, at: 0 },
      { index: 1, tool: "get_trial", input: {}, state: "running", progress: null, at: 0 },
    ]);
    s = run(...[send(), ev({ type: "tool_start", tool: "t", input: {}, index: 0 }), ev({ type: "tool_progress", tool: "t", index: 0, stage: "s", message: "m", progress: 7 })]);
    expect(last(s).tools[0].progress).toBe(1);
    s = chatReducer(s, ev({ type: "tool_progress", tool: "t", index: 0, stage: "s", message: "m", progress: null }));
    expect(last(s).tools[0].progress).toBeNull();
    s = chatReducer(s, ev({ type: "tool_complete", tool: "t", index: 0, is_error: true }));
    expect(last(s).tools[0].state).toBe("error");
  });

  it("each tool step remembers where in the text it began, and complete fills in what it returned", () => {
    const s = run(
      send(),
      ev({ type: "text_delta", text: "Let me search." }),
      ev({ type: "tool_start", tool: "search_pubmed", input: { query: "lung cancer" }, index: 0 }),
      ev({ type: "tool_complete", tool: "search_pubmed", index: 0, is_error: false }),
      ev({ type: "text_delta", text: " Found 24." }),
      ev(
        complete({
          message: "Let me search. Found 24.",
          tool_history: [{ tool_name: "search_pubmed", input: { query: "lung cancer" }, output: "PubMed search 'lung cancer': 24 articles match", is_error: false, at: 14 }],
        }),
      ),
    );
    expect(last(s).tools).toMatchObject([{ index: 0, at: 14, state: "done", output: "PubMed search 'lung cancer': 24 articles match" }]);
  });

  it("a stored answer's tool history becomes steps in place (after a reload)", () => {
    const s = chatReducer(initialChatState, {
      type: "loaded",
      conversation: {
        id: 3,
        title: "t",
        app: "tablizer",
        messages: [
          { id: 1, role: "user", content: "q", status: "complete", extras: {} },
          {
            id: 2,
            role: "assistant",
            content: "Let me search. Found 24.",
            status: "complete",
            extras: { tool_history: [{ tool_name: "search_pubmed", input: { query: "x" }, output: "o", is_error: true, at: 14 }] },
          },
        ],
      } as never,
    });
    expect(last(s).tools).toEqual([{ index: 0, tool: "search_pubmed", input: { query: "x" }, progress: null, state: "error", at: 14, output: "o" }]);
  });

  it("usage keeps the latest token counts", () => {
    const counts = { input_tokens: 5, output_tokens: 2, cache_read_input_tokens: 1, cache_creation_input_tokens: 0 };
    const s = run(send(), ev({ type: "usage", ...counts, context_window: 1000 }));
    expect(s.usage).toEqual({ ...counts, context_window: 1000 });
  });

  it("complete replaces the streamed text and attaches payloads and suggestions", () => {
    const s = run(send(), ev({ type: "text_delta", text: "Here is a query. PUBMED_QUERY: {" }), ev(complete()));
    const m = last(s);
    expect(s.streaming).toBe(false);
    expect(s.statusText).toBeNull();
    expect(m).toMatchObject({ id: 21, status: "complete", content: "Here is a query." });
    expect(m.payloads.map((p) => p.id)).toEqual(["p1"]);
    expect(m.suggestedValues).toEqual([{ label: "Yes", value: "Yes please" }]);
    expect(m.suggestedActions[0].handler).toBe("client");
    expect(m.toolHistory[0].tool_name).toBe("search_pubmed");
    expect(s.conversationId).toBe(9);
    expect(s.usage?.input_tokens).toBe(100);
    expect(s.error).toBeNull();
  });

  it("complete with status interrupted or failed ends the turn that way", () => {
    expect(last(run(send(), ev(complete({ status: "interrupted" })))).status).toBe("interrupted");
    const failed = run(send(), ev(complete({ status: "failed" })));
    expect(last(failed).status).toBe("failed");
    expect(failed.error?.retryable).toBe(true);
  });

  it("error keeps the partial answer and records a retryable error", () => {
    const s = run(
      send(),
      ev({ type: "text_delta", text: "Partial" }),
      ev({ type: "tool_start", tool: "t", input: {}, index: 0 }),
      ev({ type: "error", message: "Model overloaded", code: "overloaded", retryable: true, conversation_id: 9, message_id: null }),
    );
    expect(s.streaming).toBe(false);
    expect(last(s)).toMatchObject({ status: "failed", content: "Partial" });
    expect(last(s).tools[0].state).toBe("error");
    expect(s.error).toEqual({ message: "Model overloaded", code: "overloaded", retryable: true });
  });

  it("an interrupted error (the server restarted, its worker died) keeps the answer as interrupted", () => {
    const s = run(
      send(),
      ev({ type: "text_delta", text: "So far" }),
      ev({ type: "error", message: "The server restarted while answering", code: "interrupted", retryable: true,
        conversation_id: 7, message_id: 2 }),
    );
    expect(last(s)).toMatchObject({ status: "interrupted", content: "So far" });
    expect(s.error).toMatchObject({ code: "interrupted", retryable: true });
  });

  it("error with retryable false is not retryable", () => {
    expect(run(send(), ev({ type: "error", message: "Refused", code: "refusal", retryable: false, conversation_id: 9, message_id: null })).error?.retryable).toBe(false);
  });

  it("ignores events when no turn is streaming", () => {
    const done = run(send(), ev(complete()));
    expect(chatReducer(done, ev({ type: "text_delta", text: "late" }))).toBe(done);
    expect(run(ev({ type: "text_delta", text: "x" }))).toEqual(initialChatState);
  });
});

describe("stop, failure and retry", () => {
  it("stopped keeps the partial answer as interrupted and stops running tools", () => {
    const s = run(send(), ev({ type: "text_delta", text: "So far" }), ev({ type: "tool_start", tool: "t", input: {}, index: 0 }), { type: "stopped" });
    expect(s.streaming).toBe(false);
    expect(last(s)).toMatchObject({ status: "interrupted", content: "So far" });
    expect(last(s).tools[0].state).toBe("stopped");
    expect(s.error).toBeNull();
  });

  it("failed (HTTP or network) marks the turn failed with the error", () => {
    const s = run(send(), { type: "failed", error: { message: "Conversation busy", code: "conflict", retryable: false } });
    expect(last(s).status).toBe("failed");
    expect(s.error?.message).toBe("Conversation busy");
  });

  it("failed outside a turn only records the error", () => {
    const s = run({ type: "failed", error: { message: "Not found", retryable: false } });
    expect(s.messages).toEqual([]);
    expect(s.error?.message).toBe("Not found");
  });

  it("a retry send replaces the failed attempt instead of adding to it", () => {
    const failed = run(send("first", "1"), ev(complete()), send("second", "2"), ev({ type: "error", message: "x", code: "overloaded", retryable: true, conversation_id: 9, message_id: null }));
    expect(failed.messages).toHaveLength(4);
    const retried = chatReducer(failed, { type: "send", message: "second", context: CONTEXT, key: "3", retry: true });
    expect(retried.messages.map((m) => m.content)).toEqual(["first", "Here is a query.", "second", ""]);
    expect(retried.error).toBeNull();
    expect(retried.streaming).toBe(true);
  });
});

describe("stored conversations and decisions", () => {
  const AT = "2026-01-01T00:00:00Z";
  const stored: ConversationDetail = {
    id: 4,
    app: "tablizer",
    title: "EGFR",
    created_at: AT,
    updated_at: AT,
    messages: [
      { id: 1, role: "user", content: "q", context: CONTEXT, extras: {}, status: "complete", created_at: AT },
      {
        id: 2,
        role: "assistant",
        content: "a",
        context: null,
        extras: {
          payloads: [{ id: "p1", type: "ai_column_suggestion", data: { name: "n" }, source: "llm", decision: "accepted" }],
          suggested_values: [{ label: "More", value: "more" }],
          usage: { input_tokens: 50, output_tokens: 5 },
        },
        status: "interrupted",
        created_at: AT,
      },
      { id: 3, role: "tool", content: "ignored", context: null, extras: {}, status: "complete", created_at: AT },
    ],
  };

  it("loaded maps stored messages, decisions and the last usage", () => {
    const s = run(send(), { type: "loaded", conversation: stored });
    expect(s.conversationId).toBe(4);
    expect(s.streaming).toBe(false);
    expect(s.messages.map((m) => [m.id, m.role, m.status])).toEqual([
      [1, "user", "complete"],
      [2, "assistant", "interrupted"],
    ]);
    expect(s.messages[0].context).toEqual(CONTEXT);
    expect(s.messages[1].payloads[0].decision).toBe("accepted");
    expect(s.messages[1].suggestedValues).toHaveLength(1);
    expect(s.usage).toEqual({ input_tokens: 50, output_tokens: 5 });
  });

  it("loaded skips the all-zero usage of a turn stopped before the model reported any", () => {
    const stopped = {
      ...stored,
      messages: [
        ...stored.messages,
        { id: 5, role: "user", content: "again", context: CONTEXT, extras: {}, status: "complete" },
        { id: 6, role: "assistant", content: "part", context: null, status: "interrupted",
          extras: { usage: { input_tokens: 0, output_tokens: 0, context_window: 200000 } } },
      ],
    } as ConversationDetail;
    expect(run(send(), { type: "loaded", conversation: stopped }).usage).toEqual({ input_tokens: 50, output_tokens: 5 });
  });

  it("decided records the decision on the payload", () => {
    const s = run(send(), ev(complete()), { type: "decided", payloadId: "p1", decision: "dismissed" });
    expect(last(s).payloads[0].decision).toBe("dismissed");
  });

  it("reset starts a new conversation", () => {
    expect(run(send(), ev(complete()), { type: "reset" })).toEqual(initialChatState);
  });
});

describe("payloadsOf", () => {
  it("keeps typed cards and gives each an id and data", () => {
    const turn = (complete() as Extract<ChatEvent, { type: "complete" }>).payload;
    const cards = payloadsOf({ ...turn, payloads: [{ id: "c", type: "x", data: {}, source: "llm" }, { type: 3 } as never] });
    expect(cards.map((p) => p.id)).toEqual(["c"]);
  });
});

describe("a turn that outlives its connection", () => {
  const running: ConversationDetail = {
    id: 7,
    app: "tablizer",
    title: "EGFR",
    created_at: "2026-11-23T10:00:00Z",
    updated_at: "2026-11-23T10:01:00Z",
    messages: [
      { id: 1, role: "user", content: "first", context: CONTEXT, extras: {}, status: "complete", created_at: "2026-11-23T10:00:00Z" },
      { id: 2, role: "assistant", content: "done", context: null, extras: {}, status: "complete", created_at: "2026-11-23T10:00:00Z" },
      { id: 3, role: "user", content: "second", context: CONTEXT, extras: {}, status: "complete", created_at: "2026-11-23T10:00:00Z" },
      { id: 4, role: "assistant", content: "Half an ans", context: null, extras: { turn_id: "t2" }, status: "running", created_at: "2026-11-23T10:00:00Z" },
    ],
  };
  const replayed: ChatEvent[] = [
    { type: "conversation", conversation_id: 7, turn_id: "t2", user_message_id: 3 },
    { type: "status", message: "Thinking…" },
    { type: "text_delta", text: "Half an ans" },
    { type: "text_delta", text: "wer." },
  ];

  it("loaded shows a running answer as still streaming, with its text so far and what Retry would resend", () => {
    const s = run({ type: "loaded", conversation: running });
    expect(s.streaming).toBe(true);
    expect(s.messages.map((m) => m.status)).toEqual(["complete", "complete", "complete", "streaming"]);
    expect(last(s)).toMatchObject({ id: 4, content: "Half an ans" });
    expect(s.lastRequest).toEqual({ message: "second", context: CONTEXT });
  });

  it("a replay from the turn's first event rebuilds the stored running answer instead of doubling it", () => {
    let s = run({ type: "loaded", conversation: running });
    const shown = [last(s).content];
    for (const event of replayed) {
      s = chatReducer(s, ev(event));
      shown.push(last(s).content);
    }
    // The saved text stays on screen while the replay catches up with it: the answer never shrinks.
    expect(shown).toEqual(["Half an ans", "Half an ans", "Half an ans", "Half an ans", "Half an answer."]);
    expect(s.messages).toHaveLength(4);
    expect(s.messages[2].id).toBe(3);
    const done = chatReducer(s, ev(complete({ message: "Half an answer.", conversation_id: 7, message_id: 4 })));
    expect(done.streaming).toBe(false);
    expect(last(done)).toMatchObject({ id: 4, content: "Half an answer.", status: "complete" });
  });

  // A worker died after storing "Half an ans" and sending "wer, gi": the `resync` voids what it never stored.
  const diedAfterStoring = (): ChatAction[] => [
    send(),
    ev(replayed[0]),
    ev({ type: "text_delta", text: "Half an ans" }),
    ev({ type: "text_delta", text: "wer, gi" }), // sent, never stored
    ev({ type: "resync", after: 2, text: "Half an ans" }),
  ];

  it("resync after a dead worker: text received after the stored part is shown once, not twice", () => {
    const s = run(
      ...diedAfterStoring(),
      ev({ type: "text_delta", text: "wer, given in full." }),
    );
    expect(last(s).content).toBe("Half an answer, given in full.");
  });

  it("resync before an interrupted end: the answer left is the stored one, without the text never stored", () => {
    const s = run(
      ...diedAfterStoring(),
      ev({ type: "error", message: "The answer was interrupted.", code: "interrupted", retryable: true, conversation_id: 1, message_id: 2 }),
    );
    expect(last(s)).toMatchObject({ content: "Half an ans", status: "interrupted" });
    expect(s.streaming).toBe(false);
    expect(s.error).toMatchObject({ code: "interrupted", retryable: true });
  });

  it("resync during a replay keeps the saved text on screen and goes on from the stored part", () => {
    let s = run({ type: "loaded", conversation: { ...running, messages: [...running.messages.slice(0, 3), { ...running.messages[3], content: "Half an answer, gi" }] } });
    const shown = [last(s).content];
    for (const event of [replayed[0], replayed[2], { type: "resync", after: 2, text: "Half an ans" }, { type: "text_delta", text: "wer, given." }] as ChatEvent[]) {
      s = chatReducer(s, ev(event));
      shown.push(last(s).content);
    }
    expect(shown).toEqual(["Half an answer, gi", "Half an answer, gi", "Half an answer, gi", "Half an answer, gi", "Half an answer, given."]);
  });

  it("a replay that differs from the saved text replaces it once it goes past what the replay matched", () => {
    const s = run(
      { type: "loaded", conversation: running },
      ev(replayed[0]),
      ev({ type: "text_delta", text: "Half" }),
      ev({ type: "text_delta", text: " a reply" }),
    );
    expect(last(s).content).toBe("Half a reply");
    expect(chatReducer(s, ev({ type: "text_delta", text: "!" })).messages.at(-1)!.content).toBe("Half a reply!");
  });

  it("only the newest answer can still be running: an older running one shows as interrupted", () => {
    const older = { ...running, messages: [running.messages[0], { ...running.messages[1], status: "running" }, running.messages[2]] };
    const s = run({ type: "loaded", conversation: older });
    expect(s.streaming).toBe(false);
    expect(s.messages.map((m) => m.status)).toEqual(["complete", "interrupted", "complete"]);
  });

  it("reconnecting is a quiet flag that the next event clears", () => {
    let s = run(send(), ev({ type: "text_delta", text: "So" }), { type: "reconnecting" });
    expect(s.reconnecting).toBe(true);
    expect(s.streaming).toBe(true);
    s = chatReducer(s, ev({ type: "text_delta", text: " far" }));
    expect(s.reconnecting).toBe(false);
    expect(last(s).content).toBe("So far");
    expect(run(send(), ev(complete()), { type: "reconnecting" }).reconnecting).toBe(false);
  });

  it("lost keeps the partial answer as interrupted with an error whose Retry reattaches", () => {
    const error = { message: "Lost the connection", code: "connection_lost", retryable: true, resume: true };
    const s = run(send(), ev({ type: "text_delta", text: "Partial" }), { type: "reconnecting" }, { type: "lost", error });
    expect(s.streaming).toBe(false);
    expect(s.reconnecting).toBe(false);
    expect(last(s)).toMatchObject({ status: "interrupted", content: "Partial" });
    expect(s.error).toEqual(error);
  });
});

describe("the shared transcript fixture", () => {
  it("folds the shared transcript into a finished assistant message whose text is the complete payload's", async () => {
    const frames: Array<{ event: ChatEvent }> = [];
    await readEventStream(new Response(transcript).body as ReadableStream<Uint8Array>, (message) => {
      const event = toChatEvent(message);
      if (event) frames.push({ event });
    });
    let state = chatReducer(initialChatState, { type: "send", message: "hi", context: { current_page: "trialscout" }, key: "1" });
    for (const { event } of frames) state = chatReducer(state, { type: "event", event });
    const last = state.messages[state.messages.length - 1];
    const end = frames[frames.length - 1].event;
    expect(state.streaming).toBe(false);
    if (end.type === "complete") {
      expect(last.content).toBe(end.payload.message);
      expect(last.status).toBe(end.payload.status ?? "complete");
      expect(state.conversationId).toBe(end.payload.conversation_id ?? state.conversationId);
    } else {
      expect(last.status).toBe("failed");
      expect(state.error).not.toBeNull();
    }
  });

  it("folds the same transcript batched per frame into the same state as event by event", async () => {
    const events: ChatEvent[] = [];
    await readEventStream(new Response(transcript).body as ReadableStream<Uint8Array>, (message) => {
      const event = toChatEvent(message);
      if (event) events.push(event);
    });
    const start = chatReducer(initialChatState, { type: "send", message: "hi", context: {}, key: "1" });
    const one = events.reduce((s, event) => chatReducer(s, { type: "event", event }), start);
    const batches = [events.slice(0, 3), events.slice(3, 4), events.slice(4)];
    const batched = batches.reduce((s, batch) => chatReducer(s, { type: "events", events: batch }), start);
    expect(batched).toEqual(one);
  });
});
