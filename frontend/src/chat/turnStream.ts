/**
 * Follows one turn to its terminal event across broken connections.
 *
 * A turn runs on the server apart from any connection and numbers its events 1, 2, 3…; a body that ends
 * without `complete` or `error` (a network blip, a proxy cut, a server restart's `reconnect`) is only a
 * lost reader. `followTurn` reconnects with the last id it applied, backing off between attempts, and
 * drops what it already applied, so every event reaches the tray exactly once.
 */
import { ApiError, type ChatEventHandler } from "../api/client";
import type { ChatEvent } from "../api/types";

/** Waits before each reconnect in a row; any new event starts the count again. */
export const RETRY_DELAYS_MS: readonly number[] = [500, 1000, 2000, 4000, 8000];

/** Opens one connection to the turn: its events after `after`, to `onEvent`; resolves when the body ends. */
export type Connect = (after: number, onEvent: ChatEventHandler, signal: AbortSignal) => Promise<void>;

export type FollowOutcome =
  /** The terminal event was applied. */
  | { kind: "ended" }
  /** The signal aborted (Stop, unmount). */
  | { kind: "aborted" }
  /** Every reconnect failed: the turn may still be running on the server. */
  | { kind: "lost"; lastId: number; error: unknown }
  /** A refusal that waiting cannot cure (404, 409, 422…): reconnecting would only repeat it. */
  | { kind: "refused"; lastId: number; error: unknown };

export interface FollowOptions {
  connect: Connect;
  /** Each new event of the turn, in order, once (a `reconnect` frame is handled here, never passed on). */
  onEvent: (event: ChatEvent, id: number | undefined) => void;
  /** A reconnect is about to be waited for (the tray says "Reconnecting…"). */
  onReconnecting?: (attempt: number, delayMs: number) => void;
  signal: AbortSignal;
  /** The id of the last event already applied (0: none). */
  after?: number;
  delays?: readonly number[];
  /** Waits `ms`; resolves early when the signal aborts. Injected by tests; `wait` below otherwise. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const isTerminal = (event: ChatEvent) => event.type === "complete" || event.type === "error";

/** Whether a failed connection is worth retrying: the network or the server's availability, not a refusal. */
export function isTransient(err: unknown): boolean {
  if (!(err instanceof ApiError)) return true; // a body cut mid-read: fetch rejects with a TypeError
  return err.status === 0 || err.status === 502 || err.status === 503 || err.status === 504 || err.code === "bad_stream";
}

function isAbort(err: unknown, signal: AbortSignal): boolean {
  return signal.aborted || (err instanceof DOMException && err.name === "AbortError");
}

/** A timer that ends early on abort; `wake` (the tab is visible again, the network is back) ends it too. */
export function wait(ms: number, signal: AbortSignal, wake?: (resolve: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    wake?.(done);
  });
}

export async function followTurn(options: FollowOptions): Promise<FollowOutcome> {
  const { connect, onEvent, onReconnecting, signal, delays = RETRY_DELAYS_MS, sleep = wait } = options;
  let lastId = options.after ?? 0;
  let failures = 0;
  for (;;) {
    let ended = false;
    let progressed = false;
    let retryMs: number | null = null;
    let error: unknown = null;
    try {
      await connect(
        lastId,
        (event, id) => {
          if (ended) return;
          if (event.type === "reconnect") {
            retryMs = typeof event.retry_ms === "number" && event.retry_ms >= 0 ? event.retry_ms : null;
            return;
          }
          // A replay repeats what this reader already applied; a terminal event is never a repeat (a reader
          // that applied one has stopped), whatever id the server gave it.
          if (id !== undefined && id <= lastId && !isTerminal(event)) return;
          if (id !== undefined) lastId = Math.max(lastId, id);
          progressed = true;
          ended = isTerminal(event);
          onEvent(event, id);
        },
        signal,
      );
    } catch (err) {
      if (isAbort(err, signal)) return { kind: "aborted" };
      if (!ended && !isTransient(err)) return { kind: "refused", lastId, error: err };
      error = err;
    }
    if (ended) return { kind: "ended" };
    if (signal.aborted) return { kind: "aborted" };
    if (progressed) failures = 0;
    if (failures >= delays.length) return { kind: "lost", lastId, error };
    const delay = retryMs ?? delays[failures];
    failures += 1;
    onReconnecting?.(failures, delay);
    await sleep(delay, signal);
    if (signal.aborted) return { kind: "aborted" };
  }
}
