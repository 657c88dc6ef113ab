/**
 * SSE decoding for the chat stream (ARCHITECTURE.md §5) and AI column runs.
 *
 * Framing (CRLF/LF/CR, multi-line data, comments, ids) is eventsource-parser's
 * job; this module turns its messages into typed `ChatEvent`s. Unknown event
 * types and non-JSON data are dropped, never thrown: a newer server must not
 * break an older page.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { AIColumnEvent, ChatEvent, ChatEventType, ReportEvent } from "./types";

// Every event type of the generated union, listed (a new server event fails the typecheck until it is).
const CHAT_TYPES: Record<ChatEventType, true> = {
  conversation: true,
  status: true,
  text_delta: true,
  tool_start: true,
  tool_progress: true,
  tool_complete: true,
  usage: true,
  context_update: true,
  resync: true,
  complete: true,
  error: true,
  reconnect: true,
};
const KNOWN_TYPES: ReadonlySet<string> = new Set(Object.keys(CHAT_TYPES));

/** The JSON object of an SSE message with its `type`, when the type is one of `known`; otherwise null. */
function typedRecord(message: EventSourceMessage, known: ReadonlySet<string>): Record<string, unknown> | null {
  let data: unknown;
  try {
    data = JSON.parse(message.data);
  } catch {
    return null;
  }
  if (!data || typeof data !== "object" || Array.isArray(data)) return null;
  const record = data as Record<string, unknown>;
  const type = message.event ?? (typeof record.type === "string" ? record.type : undefined);
  if (!type || !known.has(type)) return null;
  return { ...record, type };
}

/** Convert one parsed SSE message into a chat event, or null if it is not one we know. */
export function toChatEvent(message: EventSourceMessage): ChatEvent | null {
  return typedRecord(message, KNOWN_TYPES) as ChatEvent | null;
}

/**
 * Read a fetch body to its end, handing every parsed SSE message to `onMessage`.
 * Resolves on end of body; rejects with AbortError when `signal` aborts.
 */
export async function readEventStream(
  body: ReadableStream<Uint8Array>,
  onMessage: (message: EventSourceMessage) => void,
  signal?: AbortSignal,
): Promise<void> {
  const reader = body.getReader();
  const text = new TextDecoder("utf-8");
  // A single event far larger than any real answer means a broken stream.
  const parser = createParser({ onEvent: onMessage, maxBufferSize: 16 * 1024 * 1024 });
  const abort = () => void reader.cancel().catch(() => undefined);
  signal?.addEventListener("abort", abort, { once: true });
  try {
    for (;;) {
      if (signal?.aborted) throw new DOMException("Aborted", "AbortError");
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(text.decode(value, { stream: true }));
    }
    if (signal?.aborted) throw new DOMException("Aborted", "AbortError");
    parser.feed(text.decode());
    parser.reset();
  } finally {
    signal?.removeEventListener("abort", abort);
    reader.releaseLock();
  }
}

/** An SSE `id` as a number (the turn log's sequence), or undefined when absent or not a number. */
export function eventId(message: EventSourceMessage): number | undefined {
  return message.id && /^\d+$/.test(message.id) ? Number(message.id) : undefined;
}

/**
 * Read a fetch body to its end, emitting chat events as they complete with their SSE id (the turn log's
 * sequence, which a resume sends back as `Last-Event-ID`); see `readEventStream`.
 */
export function readChatEvents(
  body: ReadableStream<Uint8Array>,
  onEvent: (event: ChatEvent, id?: number) => void,
  signal?: AbortSignal,
): Promise<void> {
  return readEventStream(
    body,
    (message) => {
      const event = toChatEvent(message);
      if (event) onEvent(event, eventId(message));
    },
    signal,
  );
}

const COLUMN_TYPE_NAMES: Record<AIColumnEvent["type"], true> = { progress: true, row: true, row_error: true, complete: true, error: true };
const COLUMN_TYPES: ReadonlySet<string> = new Set(Object.keys(COLUMN_TYPE_NAMES));

/** One AI column run's SSE message as a typed event, or null (unknown type, not JSON). */
export function toAIColumnEvent(message: EventSourceMessage): AIColumnEvent | null {
  return typedRecord(message, COLUMN_TYPES) as AIColumnEvent | null;
}

const REPORT_TYPE_NAMES: Record<ReportEvent["type"], true> = { report_progress: true, report_ready: true, error: true };
const REPORT_TYPES: ReadonlySet<string> = new Set(Object.keys(REPORT_TYPE_NAMES));

/** One report build's SSE message as a typed event, or null (unknown type, not JSON). */
export function toReportEvent(message: EventSourceMessage): ReportEvent | null {
  return typedRecord(message, REPORT_TYPES) as ReportEvent | null;
}
