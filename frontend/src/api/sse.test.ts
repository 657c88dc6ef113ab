import { createParser, type EventSourceMessage } from "eventsource-parser";
import { describe, expect, it } from "vitest";
// The wire contract shared with the backend tests (ARCHITECTURE.md §5).
import transcript from "../../../tests/fixtures/sse/chat_turn.sse?raw";
import { readChatEvents, readEventStream, toChatEvent } from "./sse";
import type { ChatEvent } from "./types";

function rawFrames(text: string): EventSourceMessage[] {
  const frames: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (m) => frames.push(m) });
  parser.feed(text);
  return frames;
}

function streamOf(bytes: Uint8Array, chunkSize: number): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + chunkSize));
      offset += chunkSize;
    },
  });
}

/** Decode a whole SSE text the way the page reads a response body: frames with their id and event. */
async function decode(text: string): Promise<Array<{ id?: string; event: ChatEvent }>> {
  const frames: Array<{ id?: string; event: ChatEvent }> = [];
  await readEventStream(streamOf(new TextEncoder().encode(text), 4096), (message) => {
    const event = toChatEvent(message);
    if (event) frames.push({ id: message.id, event });
  });
  return frames;
}

describe("the shared transcript fixture", async () => {
  const frames = await decode(transcript);
  const types = frames.map((f) => f.event.type);

  it("uses CRLF framing as the contract says", () => {
    expect(transcript).toContain("\r\n\r\n");
  });

  it("decodes every frame into a known chat event", () => {
    expect(frames.length).toBe(rawFrames(transcript).length);
    expect(frames.length).toBeGreaterThan(3);
  });

  it("starts with conversation and ends with complete or error", () => {
    expect(types[0]).toBe("conversation");
    expect(["complete", "error"]).toContain(types[types.length - 1]);
    expect(types.filter((t) => t === "complete" || t === "error")).toHaveLength(1);
  });

  it("numbers ids 1, 2, 3… within the turn", () => {
    expect(frames.map((f) => f.id)).toEqual(frames.map((_, i) => String(i + 1)));
  });

  it("repeats the event name as data.type", () => {
    for (const frame of rawFrames(transcript)) {
      expect(JSON.parse(frame.data).type).toBe(frame.event);
    }
  });

  it("carries the fields each event type promises", () => {
    for (const { event } of frames) {
      switch (event.type) {
        case "conversation":
          expect(typeof event.conversation_id).toBe("number");
          break;
        case "status":
          expect(typeof event.message).toBe("string");
          break;
        case "text_delta":
          expect(typeof event.text).toBe("string");
          break;
        case "tool_start":
        case "tool_progress":
        case "tool_complete":
          expect(typeof event.tool).toBe("string");
          expect(typeof event.index).toBe("number");
          break;
        case "usage":
          expect(typeof event.input_tokens).toBe("number");
          break;
        case "complete":
          expect(typeof event.payload.message).toBe("string");
          expect(Array.isArray(event.payload.payloads)).toBe(true);
          break;
        case "error":
          expect(typeof event.message).toBe("string");
          break;
      }
    }
  });

  it("decodes identically however the bytes are chunked", async () => {
    const bytes = new TextEncoder().encode(transcript);
    for (const size of [1, 2, 7, 64, 4096]) {
      const events: ChatEvent[] = [];
      await readChatEvents(streamOf(bytes, size), (e) => events.push(e));
      expect(events).toEqual(frames.map((f) => f.event));
    }
  });

  it("hands each event its id as a number, the Last-Event-ID a resume sends back", async () => {
    const ids: Array<number | undefined> = [];
    await readChatEvents(streamOf(new TextEncoder().encode(transcript), 64), (_e, id) => ids.push(id));
    expect(ids).toEqual(frames.map((_, i) => i + 1));
  });
});

describe("decoder edge cases", () => {
  it("ignores comments (heartbeats), unknown types and non-JSON data", async () => {
    const text =
      ": ping\r\n\r\n" +
      'event: mystery\r\ndata: {"type":"mystery"}\r\n\r\n' +
      "event: status\r\ndata: not json\r\n\r\n" +
      'event: status\r\ndata: {"type":"status","message":"Thinking…"}\r\n\r\n';
    expect((await decode(text)).map((f) => f.event)).toEqual([{ type: "status", message: "Thinking…" }]);
  });

  it("takes the type from data when the frame has no event line", async () => {
    expect((await decode('data: {"type":"text_delta","text":"a"}\n\n'))[0].event).toEqual({ type: "text_delta", text: "a" });
  });

  it("joins multi-line data and accepts LF and CR line ends", async () => {
    const text =
      'event: text_delta\ndata: {"type":"text_delta",\ndata: "text":"x"}\n\n' +
      'event: status\rdata: {"message":"m"}\r\r' +
      'event: text_delta\r\ndata: {"text":"y"}\r\n\r\n';
    expect((await decode(text)).map((f) => f.event)).toEqual([
      { type: "text_delta", text: "x" },
      { type: "status", message: "m" },
      { type: "text_delta", text: "y" },
    ]);
  });

  it("drops a half-received event at the end of the stream", async () => {
    expect(await decode('event: text_delta\ndata: {"text":"cut"}')).toEqual([]);
  });

  it("keeps multi-byte characters split across chunks intact", async () => {
    const bytes = new TextEncoder().encode('event: text_delta\ndata: {"text":"Ünïcødé …"}\n\n');
    const events: ChatEvent[] = [];
    await readChatEvents(streamOf(bytes, 1), (e) => events.push(e));
    expect(events).toEqual([{ type: "text_delta", text: "Ünïcødé …" }]);
  });

  it("stops reading when aborted", async () => {
    const controller = new AbortController();
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('event: status\ndata: {"message":"a"}\n\n'));
      },
    });
    const events: ChatEvent[] = [];
    const done = readChatEvents(body, (e) => {
      events.push(e);
      controller.abort();
    }, controller.signal);
    await expect(done).rejects.toMatchObject({ name: "AbortError" });
    expect(events).toHaveLength(1);
  });

  it("decodes the id-less reconnect frame a shutting-down server ends a stream with", async () => {
    const text = 'id: 7\r\nevent: text_delta\r\ndata: {"text":"a","type":"text_delta"}\r\n\r\n' +
      'event: reconnect\r\nretry: 1000\r\ndata: {"message":"Restarting","retry_ms":1000,"type":"reconnect"}\r\n\r\n';
    const seen: Array<[string, number | undefined]> = [];
    await readChatEvents(streamOf(new TextEncoder().encode(text), 5), (e, id) => seen.push([e.type, id]));
    expect(seen).toEqual([["text_delta", 7], ["reconnect", undefined]]);
  });

  it("toChatEvent rejects arrays and scalars", () => {
    expect(toChatEvent({ event: "status", data: "[1]" })).toBeNull();
    expect(toChatEvent({ event: "status", data: "3" })).toBeNull();
  });
});
