import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { ToolActivity } from "./chatMessage";
import { interleave, toolLabel, toolResult, ToolStep } from "./ToolStep";

const step = (over: Partial<ToolActivity>): ToolActivity => ({ index: 0, tool: "search_pubmed", progress: null, state: "done", at: null, ...over });

describe("tool steps", () => {
  it("reads as what was done and what it found", () => {
    expect(toolLabel("search_pubmed", { query: "lung cancer" }, false)).toBe("Searched PubMed for 'lung cancer'");
    expect(toolLabel("search_trials", { condition: "melanoma", intervention: "pembrolizumab" }, true)).toBe(
      "Searching ClinicalTrials.gov for 'melanoma, pembrolizumab'",
    );
    expect(toolLabel("get_trial", { nct_id: "nct01234567" }, false)).toBe("Read trial NCT01234567");
    expect(toolLabel("some_new_tool", {}, false)).toBe("Some new tool");
    // live: from the card the tool returned; stored: from its output
    expect(toolResult(step({ card: { id: "c", type: "pubmed_search_results", data: { total_count: 24 }, source: "tool" } as never }))).toBe("24 results");
    expect(toolResult(step({ tool: "search_trials", output: "Search (melanoma): 1 trials match; showing 1" }))).toBe("1 trial");
    expect(toolResult(step({ state: "error" }))).toBe("failed");
  });

  it("cuts the answer where each call began; calls with no place come after the text", () => {
    const segments = interleave("Let me search. Found 24. Then one more.", [
      step({ index: 0, at: 14 }),
      step({ index: 1, at: 24 }),
      step({ index: 2, at: 24 }),
      step({ index: 3, at: null }),
    ]);
    expect(segments.map((s) => (s.kind === "text" ? s.text : s.steps.map((t) => t.index).join("+")))).toEqual([
      "Let me search.",
      "0",
      " Found 24.",
      "1+2",
      " Then one more.",
      "3",
    ]);
    expect(interleave("", [step({ at: 0 })]).map((s) => s.kind)).toEqual(["tools"]);
  });

  it("draws a running step with its progress inline, collapsible to its input and output", () => {
    render(<ToolStep step={step({ state: "running", input: { query: "egfr" }, progress: 0.3, message: "Searching PubMed…" })} />);
    expect(screen.getByTestId("tool-label").textContent).toBe("Searching PubMed for 'egfr'…");
    expect((screen.getByTestId("tool-progress") as HTMLProgressElement).value).toBeCloseTo(0.3);
    expect(screen.getByTestId("tool-activity").tagName).toBe("DETAILS");
  });
});
