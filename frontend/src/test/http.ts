/** What the tests' stubbed `fetch` answers with, and the checks after each test that stubs it. */
import { afterEach, expect, vi } from "vitest";

export const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });

/** An SSE body of `events`, numbered from 1 as a turn's log numbers them. */
export function sse(events: Array<Record<string, unknown>>): Response {
  const text = events.map((e, i) => `id: ${i + 1}\r\nevent: ${e.type}\r\ndata: ${JSON.stringify(e)}\r\n\r\n`).join("");
  return new Response(text, { headers: { "Content-Type": "text/event-stream" } });
}

/** After each test of the file: nothing logged an error (the test spies on `console.error`), the real `fetch`
 * is back, and the URL is blank. */
export function checkAfterEach() {
  afterEach(() => {
    expect(console.error).not.toHaveBeenCalled();
    vi.unstubAllGlobals();
    window.history.replaceState(null, "", "/");
  });
}

/** A request the stubbed `fetch` saw; `body` is the parsed JSON body. */
export type Call = { method: string; url: string; body: any };

/** A `fetch` stub that records each request in `calls`, then lets `answer` answer it. */
export function recordingFetch(calls: Call[], answer: (call: Call, init: RequestInit) => Response | Promise<Response>) {
  return vi.fn(async (url: string, init: RequestInit = {}) => {
    const call = { method: init.method ?? "GET", url, body: init.body ? JSON.parse(String(init.body)) : undefined };
    calls.push(call);
    return answer(call, init);
  });
}
