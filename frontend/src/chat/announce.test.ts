import { renderHook } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { spokenText, useAnswerAnnouncement } from "./announce";
import type { ChatMessage } from "./chatMessage";

const answer = (content: string, status: ChatMessage["status"], key = "a1"): ChatMessage => ({
  key, role: "assistant", content, status, payloads: [], suggestedValues: [], suggestedActions: [], tools: [],
  toolHistory: [], notices: [],
});

describe("answer announcements", () => {
  it("announce an answer once, when it finishes, not while its chunks arrive", () => {
    const seen: string[] = [];
    const { result, rerender } = renderHook(({ messages }) => useAnswerAnnouncement(messages), {
      initialProps: { messages: [answer("", "streaming")] },
    });
    seen.push(result.current);
    for (const partial of ["## Found", "## Found 24", "## Found 24 **trials**"]) {
      rerender({ messages: [answer(partial, "streaming")] });
      seen.push(result.current);
    }
    expect(seen.every((t) => t === "")).toBe(true);
    rerender({ messages: [answer("## Found 24 **trials**", "complete")] });
    expect(result.current).toBe("Colleague answered: Found 24 trials.");
    const done = result.current;
    rerender({ messages: [answer("## Found 24 **trials**", "complete")] });
    expect(result.current).toBe(done);
  });

  it("do not announce history that was opened, only answers seen streaming", () => {
    const { result } = renderHook(() => useAnswerAnnouncement([answer("Old answer", "complete", "h1")]));
    expect(result.current).toBe("");
  });

  it("read Markdown as plain text and clip long answers", () => {
    expect(spokenText("> quote\n\n[PubMed](https://x) `code` | a | b |")).toBe("quote PubMed code a b");
    expect(spokenText("x".repeat(700))).toHaveLength(601);
  });
});
