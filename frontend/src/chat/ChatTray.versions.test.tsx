import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ChatTray, type PageChatBinding } from "./ChatTray";
import { type Call, json, recordingFetch, sse } from "../test/http";

const message = (id: number, role: "user" | "assistant", content: string) => ({
  id,
  role,
  content,
  context: role === "user" ? {} : null,
  extras: {},
  status: "complete",
  created_at: "2026-11-27T00:00:00Z",
});
const detail = (messages: unknown[], versions: unknown[]) => ({
  id: 5,
  app: "tablizer",
  title: "q",
  created_at: "",
  updated_at: "",
  messages,
  versions,
});

/** The server's two versions of the tail after "q": what each switch answers with. */
const first = detail([message(1, "user", "q"), message(2, "assistant", "First answer.")], [{ message_id: 1, current: 1, count: 2 }]);
const second = detail([message(3, "user", "q"), message(4, "assistant", "Second answer.")], [{ message_id: 3, current: 2, count: 2 }]);

let calls: Call[];
let shown: ReturnType<typeof detail>;

beforeEach(() => {
  calls = [];
  localStorage.setItem("colleague.conversation.tablizer", "5");
  vi.stubGlobal(
    "fetch",
    recordingFetch(calls, ({ method, url, body }) => {
      if (url === "/api/conversations/5" && method === "GET") return json(shown);
      if (url === "/api/conversations/5/versions/switch") {
        shown = body.version === 1 ? first : second;
        return json(shown);
      }
      if (url === "/api/conversations/5/rewind") return json(detail([], []));
      if (url === "/api/chat/stream") {
        shown = second;
        return sse([
          { type: "conversation", conversation_id: 5, turn_id: "t", user_message_id: 3 },
          { type: "text_delta", text: "Second answer." },
          { type: "complete", payload: { message: "Second answer.", payloads: [], conversation_id: 5, message_id: 4, status: "complete" } },
        ]);
      }
      if (url.startsWith("/api/conversations?")) return json([]);
      return json({ error: "not_found", detail: "no route" }, 404);
    }),
  );
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

function setup() {
  const binding: PageChatBinding = {
    app: "tablizer",
    getContext: () => ({ current_page: "tablizer" }),
    payloadHandlers: {},
    clientActions: {},
    onEntity: vi.fn(),
  };
  render(<ChatTray binding={binding} onClose={vi.fn()} modelLabel={null} />);
}

describe("version switcher", () => {
  it("shows where a conversation forked and swaps the answer for the version chosen", async () => {
    shown = second;
    setup();
    const switcher = await screen.findByTestId("version-switcher");
    expect(within(screen.getByTestId("message-user")).getByTestId("version-position").textContent).toBe("2 / 2");
    expect(screen.getByRole("button", { name: "Next version" })).toHaveProperty("disabled", true);
    expect(screen.getByTestId("message-assistant").textContent).toContain("Second answer.");

    fireEvent.click(within(switcher).getByRole("button", { name: "Previous version" }));
    await waitFor(() => expect(screen.getByTestId("message-assistant").textContent).toContain("First answer."));
    expect(calls.filter((c) => c.method === "POST")).toEqual([
      { method: "POST", url: "/api/conversations/5/versions/switch", body: { message_id: 3, version: 1 } },
    ]);
    expect(screen.getByTestId("version-position").textContent).toBe("1 / 2");
    expect(screen.getByRole("button", { name: "Previous version" })).toHaveProperty("disabled", true);

    fireEvent.click(screen.getByRole("button", { name: "Next version" }));
    await waitFor(() => expect(screen.getByTestId("message-assistant").textContent).toContain("Second answer."));
    expect(calls.at(-1)?.body).toEqual({ message_id: 1, version: 2 });
  });

  it("shows the new answer as the latest version after a regenerate", async () => {
    shown = detail([message(1, "user", "q"), message(2, "assistant", "First answer.")], []);
    setup();
    await screen.findByText("First answer.");
    expect(screen.queryByTestId("version-switcher")).toBeNull();
    fireEvent.click(screen.getByTestId("message-regenerate"));
    await waitFor(() => expect(screen.getByTestId("version-position").textContent).toBe("2 / 2"));
    expect(screen.getByTestId("message-assistant").textContent).toContain("Second answer.");
    expect(calls.filter((c) => c.method === "POST").map((c) => c.url)).toEqual([
      "/api/conversations/5/rewind",
      "/api/chat/stream",
    ]);
  });
});
