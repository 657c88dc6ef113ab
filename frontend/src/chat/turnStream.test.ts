import { describe, expect, it } from "vitest";
import { ApiError, type ChatEventHandler } from "../api/client";
import type { ChatEvent } from "../api/types";
import { followTurn, RETRY_DELAYS_MS, type Connect } from "./turnStream";

/** The events of one turn, as its log numbers them: id n is `log[n - 1]`. */
const log: ChatEvent[] = [
  { type: "conversation", conversation_id: 5, turn_id: "t", user_message_id: 1 },
  { type: "text_delta", text: "one " },
  { type: "text_delta", text: "two " },
  { type: "text_delta", text: "three " },
  { type: "text_delta", text: "four" },
  {
    type: "complete",
    payload: {
      message: "one two three four", conversation_id: 5, message_id: 2, status: "complete", payloads: [],
      suggested_values: [], suggested_actions: [], tool_history: [], usage: {},
    },
  },
];

type Attempt = (after: number, emit: ChatEventHandler) => void;

/** Emits the log's events with ids in (after, upTo], as a server replaying from `after` would. */
const replay = (upTo: number, overlap = 0): Attempt => (after, emit) => {
  for (let id = Math.max(1, after + 1 - overlap); id <= upTo; id++) emit(log[id - 1], id);
};
const networkDown: Attempt = () => {
  throw new TypeError("network error");
};

function scripted(...attempts: Attempt[]) {
  const afters: number[] = [];
  const connect: Connect = async (after, emit) => {
    afters.push(after);
    const attempt = attempts.shift();
    if (!attempt) throw new Error("no more attempts scripted");
    attempt(after, emit);
  };
  return { connect, afters };
}

async function follow(connect: Connect, over: { after?: number; signal?: AbortSignal } = {}) {
  const applied: Array<[string, number | undefined]> = [];
  const slept: number[] = [];
  const reconnecting: number[] = [];
  const outcome = await followTurn({
    connect,
    onEvent: (event, id) => applied.push([event.type === "text_delta" ? event.text : event.type, id]),
    onReconnecting: (attempt) => reconnecting.push(attempt),
    signal: over.signal ?? new AbortController().signal,
    after: over.after,
    sleep: async (ms) => void slept.push(ms),
  });
  return { outcome, applied, slept, reconnecting };
}

const text = (applied: Array<[string, number | undefined]>) => applied.map(([t]) => t).join("|");

describe("followTurn", () => {
  it("resumes after the last applied id and applies every event exactly once", async () => {
    // The second connection replays two events the first had already delivered (a server may resend).
    const { connect, afters } = scripted(replay(3), replay(6, 2));
    const { outcome, applied, slept } = await follow(connect);
    expect(outcome).toEqual({ kind: "ended" });
    expect(afters).toEqual([0, 3]);
    expect(applied.map(([, id]) => id)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(text(applied)).toBe("conversation|one |two |three |four|complete");
    expect(slept).toEqual([RETRY_DELAYS_MS[0]]);
  });

  it("starts from `after`: a resumed reader skips what the tray already shows", async () => {
    const { connect, afters } = scripted(replay(6, 1));
    const { applied } = await follow(connect, { after: 4 });
    expect(afters).toEqual([4]);
    expect(applied.map(([, id]) => id)).toEqual([5, 6]);
  });

  it("backs off 0.5 s, 1 s, 2 s… and gives up after the last delay, keeping the last id", async () => {
    const { connect, afters } = scripted(replay(2), ...RETRY_DELAYS_MS.map(() => networkDown), networkDown);
    const { outcome, slept, reconnecting } = await follow(connect);
    expect(slept).toEqual([...RETRY_DELAYS_MS]);
    expect(reconnecting).toEqual([1, 2, 3, 4, 5]);
    expect(afters).toEqual([0, 2, 2, 2, 2, 2]);
    expect(outcome.kind).toBe("lost");
    expect(outcome).toMatchObject({ lastId: 2 });
  });

  it("starts the backoff again once a reconnect brings new events", async () => {
    const { connect } = scripted(replay(1), networkDown, networkDown, replay(2), networkDown, replay(6));
    const { outcome, slept } = await follow(connect);
    expect(outcome).toEqual({ kind: "ended" });
    expect(slept).toEqual([500, 1000, 2000, 500, 1000]);
  });

  it("waits the retry_ms a reconnect event asks for, and never applies it", async () => {
    const restarting: Attempt = (after, emit) => {
      replay(3)(after, emit);
      emit({ type: "reconnect", message: "The server is restarting", retry_ms: 1234 });
    };
    const { connect, afters } = scripted(restarting, replay(6));
    const { outcome, applied, slept } = await follow(connect);
    expect(outcome).toEqual({ kind: "ended" });
    expect(slept).toEqual([1234]);
    expect(afters).toEqual([0, 3]);
    expect(applied.map(([t]) => t)).not.toContain("reconnect");
  });

  it("retries 502/503/504 and network errors, but a refusal ends at once", async () => {
    const status = (code: number): Attempt => () => {
      throw new ApiError("x", code);
    };
    const retried = await follow(scripted(status(503), status(502), replay(6)).connect);
    expect(retried.outcome).toEqual({ kind: "ended" });
    expect(retried.slept).toEqual([500, 1000]);

    const refused = await follow(scripted(replay(2), status(404)).connect);
    expect(refused.outcome).toMatchObject({ kind: "refused", lastId: 2 });
    expect(refused.slept).toEqual([500]);
  });

  it("takes a terminal event even when the server numbers it with an old id", async () => {
    const gone: Attempt = (_after, emit) =>
      emit({ type: "error", message: "This turn has no more events.", code: "no_more_events", retryable: false,
        conversation_id: 5, message_id: null }, 3);
    const { outcome, applied } = await follow(scripted(replay(3), gone).connect);
    expect(outcome).toEqual({ kind: "ended" });
    expect(applied[applied.length - 1]).toEqual(["error", 3]);
  });

  it("stops reconnecting when aborted", async () => {
    const controller = new AbortController();
    const { connect, afters } = scripted(replay(2), networkDown, networkDown);
    const outcome = await followTurn({
      connect,
      onEvent: () => undefined,
      signal: controller.signal,
      sleep: async () => controller.abort(),
    });
    expect(outcome).toEqual({ kind: "aborted" });
    expect(afters).toEqual([0]);
  });
});
