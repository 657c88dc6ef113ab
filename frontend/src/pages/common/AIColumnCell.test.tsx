import { act, fireEvent, render, renderHook, screen, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { AIColumnCard } from "../../cards/AIColumnCard";
import type { AcceptOptions } from "../../cards/types";
import { row as rowEvent, type RowEvent } from "../../test/aiColumnEvents";
import { AICell } from "./AIColumnCell";
import { applyAIFilters, useAIColumns, type AIColumns } from "./aiColumns";
import { countsText } from "./AIColumnsBar";
import { aiColumnsReducer, type AIColumn } from "./aiColumnState";
import { usePageChat, useResultsUndo } from "./usePageChat";

type Row = RowEvent;
/** A row as the criteria cell shows it: quoted from the inclusion section, no qualifier unless given. */
const row = (id: string, value: string, display: string, extra: Partial<Row> = {}): Row =>
  rowEvent(id, value, display, { sections: ["inclusion"], qualifier: null, ...extra });

/** A boolean column whose run has delivered `rows`. */
function columnWith(rows: Row[]): AIColumn {
  let columns = aiColumnsReducer([], { type: "add", column: { id: "c1", name: "Brain mets", criteria: "Allows brain metastases", type: "boolean" } });
  columns = aiColumnsReducer(columns, { type: "start", id: "c1", runId: 1, ids: rows.map((r) => r.id) });
  for (const event of rows) columns = aiColumnsReducer(columns, { type: "event", id: "c1", runId: 1, event });
  return columns[0];
}

const ai = { retryRow: vi.fn() } as unknown as AIColumns;

describe("AI cell evidence and qualifiers", () => {
  it("says in words where the quote comes from and how sure the answer is", () => {
    const column = columnWith([
      row("NCT1", "MET", "Yes · needs review", { qualifier: "needs_review", evidence: ["Known brain metastases"], sections: ["exclusion"] }),
      row("NCT2", "NOT_MET", "No · conditional", { qualifier: "conditional", evidence: ["Untreated brain metastases", "made up"], sections: ["exclusion", null] }),
      row("NCT3", "MET", "Yes", { evidence: ["Stable brain metastases allowed"], sections: ["inclusion"] }),
    ]);
    render(
      <div>
        {["NCT1", "NCT2", "NCT3"].map((id) => (
          <AICell key={id} ai={ai} column={column} rowId={id} />
        ))}
      </div>,
    );
    const cells = screen.getAllByTestId("ai-cell");
    expect(cells.map((c) => c.textContent)).toEqual([
      "Yes · needs review (Exclusion)",
      "No · conditional (Exclusion + Not found in the record)",
      "Yes (Inclusion)",
    ]);
    expect(cells.map((c) => c.dataset.state)).toEqual(["needs_review", "conditional", "yes"]);
    expect(cells[0].getAttribute("title")).toBe("Exclusion: “Known brain metastases” (click for the reasoning)");

    fireEvent.click(cells[1]);
    const details = screen.getByRole("dialog");
    expect(within(details).getAllByTestId("ai-evidence-section").map((s) => s.textContent)).toEqual(["Exclusion:", "Not found in the record:"]);
    expect(within(details).getByTestId("ai-cell-evidence").textContent).toBe("Exclusion: Untreated brain metastasesNot found in the record: made up");
    expect(within(details).getByTestId("ai-cell-qualifier").textContent).toMatch(/^Conditional: /);
  });

  it("filters treat a qualified answer as its own verdict, not as Yes or No", () => {
    const column = columnWith([
      row("NCT1", "MET", "Yes"),
      row("NCT2", "MET", "Yes · conditional", { qualifier: "conditional" }),
      row("NCT3", "MET", "Yes · needs review", { qualifier: "needs_review" }),
      row("NCT4", "NOT_MET", "No"),
    ]);
    const rows = ["NCT1", "NCT2", "NCT3", "NCT4"].map((id) => ({ id }));
    const kept = (filter: AIColumn["filter"]) => applyAIFilters(rows, [{ ...column, filter }], (r) => r.id).map((r) => r.id);
    expect(kept("yes")).toEqual(["NCT1"]);
    expect(kept("conditional")).toEqual(["NCT2"]);
    expect(kept("needs_review")).toEqual(["NCT3"]);
    expect(kept("no")).toEqual(["NCT4"]);
    expect(countsText(column)).toBe("Yes 1 · No 1 · Conditional 1 · Needs review 1 · Unknown 0");
  });

  it("a cell cached before the server placed quotes shows them without a section", () => {
    const column = columnWith([row("NCT1", "MET", "Yes", { sections: [] })]);
    render(<AICell ai={ai} column={column} rowId="NCT1" />);
    expect(screen.getByTestId("ai-cell").textContent).toBe("Yes");
    fireEvent.click(screen.getByTestId("ai-cell"));
    expect(screen.queryByTestId("ai-evidence-section")).toBeNull();
  });
});

describe("Accept & filter to Yes", () => {
  const payload = (type: "boolean" | "text") => ({
    id: 7,
    type: "ai_column_suggestion",
    data: { name: "Brain mets", criteria: "Allows brain metastases", type },
  });

  it("the card offers it for a Yes/No column and accepts with the Yes filter", async () => {
    const onAccept = vi.fn<(options?: AcceptOptions) => Promise<void>>(async () => undefined);
    const { rerender } = render(<AIColumnCard payload={payload("boolean") as never} onAccept={onAccept} onDismiss={vi.fn()} />);
    await act(async () => fireEvent.click(screen.getByTestId("card-accept-filter")));
    expect(screen.getByTestId("card-accept-filter").textContent).toBe("Accept & filter to Yes");
    expect(onAccept).toHaveBeenCalledWith({ filter: "yes" });
    await act(async () => fireEvent.click(screen.getByTestId("card-accept")));
    expect(onAccept).toHaveBeenLastCalledWith();

    rerender(<AIColumnCard payload={payload("text") as never} onAccept={onAccept} onDismiss={vi.fn()} />);
    expect(screen.queryByTestId("card-accept-filter")).toBeNull();
  });

  it("adds the column and its Yes filter in one step, so the table keeps only Yes rows", () => {
    vi.stubGlobal("fetch", vi.fn(async () => new Promise<Response>(() => undefined)));
    try {
      const rows = [{ nct_id: "NCT00000001" }, { nct_id: "NCT00000002" }];
      const { result } = renderHook(() => useAIColumns("trialscout", rows));
      act(() => result.current.addSuggestion(payload("boolean").data, "yes"));
      const [column] = result.current.columns;
      expect([column.name, column.filter]).toEqual(["Brain mets", "yes"]);
      // nothing is shown as Yes before the rows are evaluated
      expect(applyAIFilters(rows, result.current.columns, (r) => r.nct_id)).toEqual([]);

      act(() => result.current.addSuggestion({ ...payload("boolean").data, name: "Plain" }));
      expect(result.current.columns[1].filter).toBeNull();
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it("the page's accept applies both in one undoable step and says so", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => new Promise<Response>(() => undefined)));
    try {
      const rows = [{ nct_id: "NCT00000001" }];
      const { result } = renderHook(() => {
        const ai = useAIColumns("trialscout", rows);
        const undo = useResultsUndo(ai, () => null, () => undefined);
        const chat = usePageChat({ app: "trialscout", context: {}, undo, ai, handlers: {}, insights: {}, clientActions: {}, onEntity: vi.fn() });
        return { ai, chat };
      });
      const accept = result.current.chat.payloadHandlers.ai_column_suggestion!;
      let outcome: Awaited<ReturnType<typeof accept>>;
      await act(async () => {
        outcome = await accept(payload("boolean").data, { filter: "yes" });
      });
      expect(result.current.ai.columns.map((c) => [c.name, c.filter])).toEqual([["Brain mets", "yes"]]);
      expect(outcome!?.summary).toBe("Added AI column 'Brain mets', filtered to Yes");
      act(() => outcome!?.undo());
      expect(result.current.ai.columns).toEqual([]);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
