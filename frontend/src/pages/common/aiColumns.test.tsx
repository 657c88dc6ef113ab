import { act, fireEvent, render, renderHook, screen, waitFor, within } from "@testing-library/react";
import { useState } from "react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AIColumnEvent } from "../../api/types";
import { row } from "../../test/aiColumnEvents";
import { AICell, AIColumnHeader } from "./AIColumnCell";
import { applyAIFilters, normalizeRowId, useAIColumns } from "./aiColumns";
import { AIColumnsBar, countsText } from "./AIColumnsBar";
import { aiColumnsContext, aiColumnsReducer, columnCounts, type AIColumn, type AIColumnAction } from "./aiColumnState";

// ---- helpers ---------------------------------------------------------------------------------------

const progress = (done: number, total: number): AIColumnEvent => ({ type: "progress", done, total });
const complete = (total: number): AIColumnEvent => ({
  type: "complete",
  done: total,
  total,
  counts: { yes: 0, no: 0, unknown: 0, answered: 0, error: 0 },
  cached: 0,
  model: "m",
});

/** An SSE response the test writes to event by event. */
function liveSSE() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let n = 0;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  const frame = (e: AIColumnEvent) => `id: ${++n}\r\nevent: ${e.type}\r\ndata: ${JSON.stringify(e)}\r\n\r\n`;
  return {
    response: new Response(body, { status: 200, headers: { "Content-Type": "text/event-stream" } }),
    send: (...events: AIColumnEvent[]) => {
      try {
        controller.enqueue(new TextEncoder().encode(events.map(frame).join("")));
      } catch {
        // the reader cancelled the stream (the run was aborted): the server would see the disconnect
      }
    },
    close: () => {
      try {
        controller.close();
      } catch {
        // already cancelled
      }
    },
  };
}

const sse = (...events: AIColumnEvent[]) => {
  const s = liveSSE();
  s.send(...events);
  s.close();
  return s.response;
};

interface Call {
  body: { column: { name: string; criteria: string; type: string }; app: string; ids: string[]; items?: unknown[] };
  signal: AbortSignal;
}
let calls: Call[];
let responses: Array<() => Response | Promise<Response>>;

beforeEach(() => {
  calls = [];
  responses = [];
  vi.stubGlobal(
    "fetch",
    vi.fn(async (url: string, init: RequestInit = {}) => {
      expect(url).toBe("/api/ai-columns/evaluate");
      calls.push({ body: JSON.parse(String(init.body)), signal: init.signal as AbortSignal });
      const next = responses.shift();
      if (!next) throw new Error("no response scripted");
      return next();
    }),
  );
});

afterEach(() => vi.unstubAllGlobals());

const trials = (...ids: string[]) => ids.map((nct_id) => ({ nct_id, title: `Trial ${nct_id}`, phase: ["PHASE2"] }));

function cells(column: AIColumn) {
  return Object.fromEntries(column.run.ids.map((id) => {
    const cell = column.run.cells[id];
    return [id, cell.status === "done" ? cell.display : cell.status];
  }));
}

// ---- the reducer -----------------------------------------------------------------------------------

describe("aiColumnsReducer", () => {
  const fold = (actions: AIColumnAction[]) => actions.reduce(aiColumnsReducer, [] as AIColumn[]);
  const base: AIColumnAction[] = [
    { type: "add", column: { id: "c", name: "Adults", criteria: "Aged 18 or older", type: "boolean" } },
    { type: "start", id: "c", runId: 1, ids: ["A", "B", "C"] },
  ];
  const ev = (event: AIColumnEvent, runId = 1): AIColumnAction => ({ type: "event", id: "c", runId, event });

  it("fills cells as rows arrive and tracks progress to complete", () => {
    let [c] = fold(base);
    expect(c.run).toMatchObject({ status: "running", done: 0, total: 3 });
    expect(cells(c)).toEqual({ A: "pending", B: "pending", C: "pending" });
    [c] = fold([...base, ev(progress(0, 3)), ev(row("B", "MET", "Yes")), ev(progress(1, 3))]);
    expect(cells(c)).toEqual({ A: "pending", B: "Yes", C: "pending" });
    expect(c.run).toMatchObject({ status: "running", done: 1, total: 3 });
    expect(columnCounts(c)).toEqual({ yes: 1, no: 0, conditional: 0, needs_review: 0, unknown: 0, error: 0, pending: 2 });
    [c] = fold([...base, ev(row("B", "MET", "Yes")), ev(row("A", "NOT_MET", "No")), ev(row("C", "UNKNOWN")), ev(progress(3, 3)), ev(complete(3))]);
    expect(c.run).toMatchObject({ status: "complete", done: 3, total: 3, model: "m" });
    expect(columnCounts(c)).toEqual({ yes: 1, no: 1, conditional: 0, needs_review: 0, unknown: 1, error: 0, pending: 0 });
    expect(countsText(c)).toBe("Yes 1 · No 1 · Unknown 1");
  });

  it("drops the events of a replaced run", () => {
    const [c] = fold([...base, { type: "start", id: "c", runId: 2, ids: ["D"] }, ev(row("A", "MET"), 1), ev(progress(1, 3), 1)]);
    expect(c.run).toMatchObject({ runId: 2, ids: ["D"], done: 0, total: 1 });
    expect(cells(c)).toEqual({ D: "pending" });
  });

  it("marks a row_error, and a retried row goes back to pending then done", () => {
    let [c] = fold([...base, ev({ type: "row_error", id: "A", message: "Model overloaded", retryable: true })]);
    expect(c.run.cells.A).toEqual({ status: "error", message: "Model overloaded", retryable: true });
    expect(columnCounts(c).error).toBe(1);
    expect(countsText(c)).toBe("Yes 0 · No 0 · Unknown 0 · Errors 1 · Evaluating 2");
    const retried: AIColumnAction[] = [...base, ev({ type: "row_error", id: "A", message: "x", retryable: true }), { type: "retry_row", id: "c", runId: 1, rowId: "A" }];
    [c] = fold(retried);
    expect(c.run.cells.A).toEqual({ status: "pending" });
    [c] = fold([...retried, ev(row("A", "MET", "Yes"))]);
    expect(cells(c).A).toBe("Yes");
    [c] = fold([...retried, { type: "row_failed", id: "c", runId: 1, rowId: "A", error: { message: "down", code: "x", retryable: true } }]);
    expect(c.run.cells.A).toMatchObject({ status: "error", message: "down" });
  });

  it("a fatal error or a failed request stops the run and keeps what arrived", () => {
    let [c] = fold([...base, ev(row("A", "MET", "Yes")), ev({ type: "error", message: "No records", code: "source_unavailable", retryable: true })]);
    expect(c.run).toMatchObject({ status: "failed", error: { message: "No records", code: "source_unavailable", retryable: true } });
    expect(cells(c)).toEqual({ A: "Yes", B: "pending", C: "pending" });
    [c] = fold([...base, { type: "failed", id: "c", runId: 1, error: { message: "Could not reach the server.", code: "network_error", retryable: true } }]);
    expect(c.run.status).toBe("failed");
  });

  it("a row the server never answered becomes a retryable error at complete", () => {
    const [c] = fold([...base, ev(row("A", "MET")), ev(row("B", "MET")), ev(complete(3))]);
    expect(c.run.cells.C).toMatchObject({ status: "error", retryable: true });
  });

  it("rows that cannot be sent start as errors and count as done", () => {
    const [c] = fold([base[0], { type: "start", id: "c", runId: 1, ids: ["A", "bad"], rejected: { bad: "bad is not a valid NCT id." } }, ev(progress(0, 1))]);
    expect(c.run).toMatchObject({ done: 1, total: 2, skipped: 1 });
    expect(c.run.cells.bad).toMatchObject({ status: "error", retryable: false });
  });

  it("filters keep only finished rows that match; the context carries filter and counts", () => {
    const evaluated = fold([...base, ev(row("A", "MET", "Yes")), ev(row("B", "NOT_MET", "No"))]);
    const rows = ["A", "B", "C"].map((id) => ({ id }));
    const shown = (filter: AIColumn["filter"]) => applyAIFilters(rows, [{ ...evaluated[0], filter }], (r) => r.id).map((r) => r.id);
    expect(shown(null)).toEqual(["A", "B", "C"]);
    expect(shown("yes")).toEqual(["A"]);
    expect(shown("no")).toEqual(["B"]);
    expect(shown("unknown")).toEqual([]); // C is still evaluating
    const filtered = aiColumnsReducer(evaluated, { type: "filter", id: "c", filter: "no" });
    expect(aiColumnsContext(filtered)).toEqual([
      {
        name: "Adults",
        type: "boolean",
        criteria: "Aged 18 or older",
        filter_active: true,
        filter: "no",
        counts: { yes: 1, no: 1, conditional: 0, needs_review: 0, unknown: 0, error: 0, pending: 1 },
        verdicts: { A: "yes", B: "no" }, // C is still evaluating
      },
    ]);
    expect(aiColumnsContext(aiColumnsReducer(filtered, { type: "filter", id: "c", filter: null }))[0]).toMatchObject({ filter_active: false, filter: null });
  });

  it("text columns count answered rows and filter to those with an answer", () => {
    const [c] = fold([
      { type: "add", column: { id: "c", name: "Dose", criteria: "What dose?", type: "text" } },
      { type: "start", id: "c", runId: 1, ids: ["A", "B"] },
      { type: "event", id: "c", runId: 1, event: row("A", "10 mg") },
      { type: "event", id: "c", runId: 1, event: row("B", null) },
    ]);
    expect(cells(c)).toEqual({ A: "10 mg", B: "Unknown" });
    expect(columnCounts(c)).toEqual({ answered: 1, unknown: 1, error: 0, pending: 0 });
    expect(applyAIFilters([{ id: "A" }, { id: "B" }], [{ ...c, filter: "answered" }], (r) => r.id)).toEqual([{ id: "A" }]);
    expect(aiColumnsContext([c])[0].verdicts).toEqual({ A: "10 mg", B: "Unknown" });
  });
});

// ---- the hook over a stubbed fetch ------------------------------------------------------------------

describe("useAIColumns", () => {
  function setup(initial: Array<Record<string, unknown>>) {
    return renderHook(({ rows }) => useAIColumns("trialscout", rows), { initialProps: { rows: initial } });
  }

  it("evaluates the loaded rows and fills in progressively as row events arrive", async () => {
    const stream = liveSSE();
    responses.push(() => stream.response);
    const { result } = setup(trials("NCT00000001", "NCT00000002", "NCT00000003"));
    act(() => result.current.add("Adults", "Aged 18 years or older", "boolean"));
    await waitFor(() => expect(calls).toHaveLength(1));
    expect(calls[0].body).toEqual({
      column: { name: "Adults", criteria: "Aged 18 years or older", type: "boolean" },
      app: "trialscout",
      ids: ["NCT00000001", "NCT00000002", "NCT00000003"],
      items: trials("NCT00000001", "NCT00000002", "NCT00000003"),
    });
    const column = () => result.current.columns[0];
    expect(cells(column())).toEqual({ NCT00000001: "pending", NCT00000002: "pending", NCT00000003: "pending" });

    stream.send(progress(0, 3), row("NCT00000002", "MET", "Yes"), progress(1, 3));
    await waitFor(() => expect(column().run.done).toBe(1));
    expect(cells(column())).toEqual({ NCT00000001: "pending", NCT00000002: "Yes", NCT00000003: "pending" });

    stream.send(row("NCT00000001", "NOT_MET", "No"), progress(2, 3), { type: "row_error", id: "NCT00000003", message: "Model overloaded", retryable: true }, progress(3, 3), complete(3));
    stream.close();
    await waitFor(() => expect(column().run.status).toBe("complete"));
    expect(column().run).toMatchObject({ done: 3, total: 3 });
    expect(cells(column())).toEqual({ NCT00000001: "No", NCT00000002: "Yes", NCT00000003: "error" });

    // Retry the failed row: one id, and only its cell changes.
    responses.push(() => sse(progress(0, 1), row("NCT00000003", "UNKNOWN"), progress(1, 1), complete(1)));
    act(() => result.current.retryRow(column().id, "NCT00000003"));
    expect(column().run.cells.NCT00000003).toEqual({ status: "pending" });
    await waitFor(() => expect(cells(column()).NCT00000003).toBe("Unknown"));
    expect(calls[1].body.ids).toEqual(["NCT00000003"]);
    expect(column().run).toMatchObject({ status: "complete", done: 3, total: 3 });
  });

  it("aborts the run when the loaded rows change and evaluates the new rows", async () => {
    const first = liveSSE();
    const second = liveSSE();
    responses.push(() => first.response, () => second.response);
    const { result, rerender } = setup(trials("NCT00000001", "NCT00000002"));
    act(() => result.current.add("Adults", "Aged 18 years or older", "boolean"));
    await waitFor(() => expect(calls).toHaveLength(1));
    first.send(progress(0, 2), row("NCT00000001", "MET", "Yes"), progress(1, 2));
    await waitFor(() => expect(result.current.columns[0].run.done).toBe(1));

    rerender({ rows: trials("NCT00000007", "NCT00000008", "NCT00000009") });
    await waitFor(() => expect(calls).toHaveLength(2));
    expect(calls[0].signal.aborted).toBe(true);
    expect(calls[1].signal.aborted).toBe(false);
    expect(calls[1].body.ids).toEqual(["NCT00000007", "NCT00000008", "NCT00000009"]);
    expect(result.current.columns[0].run).toMatchObject({ status: "running", done: 0, total: 3 });

    first.send(row("NCT00000002", "MET", "Yes"), progress(2, 2), complete(2)); // too late: ignored
    second.send(progress(0, 3), row("NCT00000008", "NOT_MET", "No"), progress(1, 3));
    await waitFor(() => expect(result.current.columns[0].run.done).toBe(1));
    expect(cells(result.current.columns[0])).toEqual({ NCT00000007: "pending", NCT00000008: "No", NCT00000009: "pending" });

    // The same rows again (a re-render with new objects) do not start another run.
    rerender({ rows: trials("NCT00000007", "NCT00000008", "NCT00000009") });
    expect(calls).toHaveLength(2);
  });

  it("maps the server's normalized ids back to the rows and does not send invalid ones", async () => {
    responses.push(() => sse(progress(0, 1), row("NCT00000042", "MET", "Yes"), progress(1, 1), complete(1)));
    const { result } = setup([{ nct_id: "nct42", title: "lower-case" }, { nct_id: "oops", title: "bad" }]);
    act(() => result.current.add("A", "B", "boolean"));
    await waitFor(() => expect(result.current.columns[0].run.status).toBe("complete"));
    expect(calls[0].body.ids).toEqual(["NCT00000042"]);
    expect(cells(result.current.columns[0])).toEqual({ nct42: "Yes", oops: "error" });
    expect(result.current.columns[0].run).toMatchObject({ done: 2, total: 2 });
    expect(normalizeRowId("tablizer", " 123 ")).toBe("123");
    expect(normalizeRowId("tablizer", "PMID1")).toBeNull();
  });

  it("a run that cannot start shows its error and retries on demand", async () => {
    const invalid = { error: "invalid_input", detail: [{ loc: ["body", "column", "criteria"], msg: "String should have at least 1 character" }] };
    responses.push(() => new Response(JSON.stringify(invalid), { status: 422, headers: { "Content-Type": "application/json" } }));
    const { result } = setup(trials("NCT00000001"));
    act(() => result.current.add("A", "B", "boolean"));
    await waitFor(() => expect(result.current.columns[0].run.status).toBe("failed"));
    expect(result.current.columns[0].run.error).toEqual({ message: "column.criteria: String should have at least 1 character", code: "invalid_input", retryable: false });

    responses.push(() => sse(progress(0, 1), row("NCT00000001", "MET", "Yes"), progress(1, 1), complete(1)));
    act(() => result.current.retry(result.current.columns[0].id));
    await waitFor(() => expect(result.current.columns[0].run.status).toBe("complete"));
    expect(result.current.columns[0].run.error).toBeNull();
  });

  it("a stream that ends without complete is a retryable failure", async () => {
    responses.push(() => sse(progress(0, 2), row("NCT00000001", "MET", "Yes"), progress(1, 2)));
    const { result } = setup(trials("NCT00000001", "NCT00000002"));
    act(() => result.current.add("A", "B", "boolean"));
    await waitFor(() => expect(result.current.columns[0].run.status).toBe("failed"));
    expect(result.current.columns[0].run.error).toMatchObject({ code: "stream_closed", retryable: true });
    expect(cells(result.current.columns[0])).toEqual({ NCT00000001: "Yes", NCT00000002: "pending" });
  });

  it("removing a column, or leaving the page, aborts its run", async () => {
    responses.push(() => liveSSE().response, () => liveSSE().response);
    const { result, unmount } = setup(trials("NCT00000001"));
    act(() => result.current.add("A", "B", "boolean"));
    act(() => result.current.add("C", "D", "text"));
    await waitFor(() => expect(calls).toHaveLength(2));
    act(() => result.current.remove(result.current.columns[0].id));
    expect(calls[0].signal.aborted).toBe(true);
    expect(calls[1].signal.aborted).toBe(false);
    unmount();
    expect(calls[1].signal.aborted).toBe(true);
  });
});

// ---- the parts -------------------------------------------------------------------------------------

describe("AI column parts", () => {
  function Table({ rows }: { rows: Array<{ nct_id: string }> }) {
    const ai = useAIColumns("trialscout", rows);
    const [, setTick] = useState(0);
    const shown = applyAIFilters(rows, ai.columns, (r) => r.nct_id);
    return (
      <div>
        <AIColumnsBar ai={ai} visible={shown.length} loaded={rows.length} />
        <button type="button" onClick={() => setTick((t) => t + 1)}>
          outside
        </button>
        <table>
          <thead>
            <tr>
              {ai.columns.map((c) => (
                <th key={c.id}>
                  <AIColumnHeader column={c} />
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {shown.map((r) => (
              <tr key={r.nct_id} data-testid="row" data-id={r.nct_id}>
                {ai.columns.map((c) => (
                  <td key={c.id}>
                    <AICell ai={ai} column={c} rowId={r.nct_id} />
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    );
  }

  it("shows progress, evaluating…, answers with reasoning on demand, and filters by verdict", async () => {
    const stream = liveSSE();
    responses.push(() => stream.response);
    render(<Table rows={trials("NCT00000001", "NCT00000002", "NCT00000003")} />);
    fireEvent.click(screen.getByTestId("ai-column-add"));
    fireEvent.change(screen.getByTestId("ai-column-name"), { target: { value: "Adults" } });
    fireEvent.change(screen.getByTestId("ai-column-criteria"), { target: { value: "Aged 18 years or older" } });
    fireEvent.click(screen.getByTestId("ai-column-add-submit"));
    await waitFor(() => expect(calls).toHaveLength(1));
    expect(screen.getAllByTestId("ai-cell").map((c) => c.textContent)).toEqual(["evaluating…", "evaluating…", "evaluating…"]);

    stream.send(progress(0, 3), row("NCT00000001", "MET", "Yes"), progress(1, 3));
    await waitFor(() => expect(screen.getByTestId("ai-progress").textContent).toBe("1/3"));
    expect(screen.getByRole("progressbar", { name: "Adults: 1 of 3 rows evaluated" })).toBeTruthy();
    stream.send(row("NCT00000002", "NOT_MET", "No"), progress(2, 3), { type: "row_error", id: "NCT00000003", message: "Model overloaded", retryable: true }, progress(3, 3), complete(3));
    stream.close();
    await waitFor(() => expect(screen.getByTestId("ai-progress").dataset.status).toBe("complete"));
    expect(screen.queryByRole("progressbar")).toBeNull();
    expect(screen.getAllByTestId("ai-cell").map((c) => c.textContent)).toEqual(["Yes", "No", "⚠ error"]);
    expect(screen.getAllByTestId("ai-cell")[2].getAttribute("title")).toBe("Model overloaded");
    expect(screen.getByTestId("ai-column-counts").textContent).toBe("Yes 1 · No 1 · Unknown 0 · Errors 1");

    // Reasoning and evidence: a dialog that takes the focus, and Escape gives it back.
    const yes = screen.getAllByTestId("ai-cell")[0];
    fireEvent.click(yes);
    const details = screen.getByRole("dialog");
    expect(within(details).getByTestId("ai-cell-reasoning").textContent).toBe("why NCT00000001");
    expect(within(details).getByTestId("ai-cell-evidence").textContent).toBe("quote NCT00000001");
    expect(document.activeElement).toBe(details);
    expect(yes.getAttribute("aria-expanded")).toBe("true");
    fireEvent.keyDown(details, { key: "Escape" });
    expect(screen.queryByRole("dialog")).toBeNull();
    expect(document.activeElement).toBe(yes);

    // Filters: Yes only, No, Unknown, All.
    const ids = () => screen.queryAllByTestId("row").map((r) => r.dataset.id);
    fireEvent.change(screen.getByTestId("ai-column-filter"), { target: { value: "yes" } });
    expect(ids()).toEqual(["NCT00000001"]);
    expect(screen.getByTestId("ai-filter-summary").textContent).toBe("Filters show 1 of 3 loaded rows");
    fireEvent.change(screen.getByTestId("ai-column-filter"), { target: { value: "no" } });
    expect(ids()).toEqual(["NCT00000002"]);
    fireEvent.change(screen.getByTestId("ai-column-filter"), { target: { value: "unknown" } });
    expect(ids()).toEqual([]);
    fireEvent.change(screen.getByTestId("ai-column-filter"), { target: { value: "all" } });
    expect(ids()).toHaveLength(3);
    expect(screen.queryByTestId("ai-filter-summary")).toBeNull();

    // The error cell: its message on click, and a retry.
    fireEvent.click(screen.getAllByTestId("ai-cell")[2]);
    expect(screen.getByTestId("ai-cell-error").textContent).toBe("Model overloaded");
    responses.push(() => sse(progress(0, 1), row("NCT00000003", "UNKNOWN"), progress(1, 1), complete(1)));
    fireEvent.click(screen.getByTestId("ai-cell-details-retry"));
    await waitFor(() => expect(screen.getAllByTestId("ai-cell")[2].textContent).toBe("Unknown"));
    expect(screen.queryByRole("dialog")).toBeNull();
  });

  it("a column whose run could not start says so in its cells, with the error and a retry", async () => {
    responses.push(() => new Response(JSON.stringify({ error: "internal", detail: "boom" }), { status: 500, headers: { "Content-Type": "application/json" } }));
    render(<Table rows={trials("NCT00000001")} />);
    fireEvent.click(screen.getByTestId("ai-column-add"));
    fireEvent.change(screen.getByTestId("ai-column-name"), { target: { value: "A" } });
    fireEvent.change(screen.getByTestId("ai-column-criteria"), { target: { value: "B" } });
    fireEvent.click(screen.getByTestId("ai-column-add-submit"));
    expect((await screen.findByTestId("ai-column-error")).textContent).toBe("boom");
    expect(screen.getByTestId("ai-cell").textContent).toBe("not evaluated");
    responses.push(() => sse(progress(0, 1), row("NCT00000001", "MET", "Yes"), progress(1, 1), complete(1)));
    fireEvent.click(screen.getByTestId("ai-column-retry"));
    await waitFor(() => expect(screen.getByTestId("ai-cell").textContent).toBe("Yes"));
    expect(screen.queryByTestId("ai-column-error")).toBeNull();
  });
});
