import { describe, expect, it } from "vitest";
import { aiColumnsReducer, type AIColumn } from "./aiColumnState";
import { parseSavedAIColumns, savedAIColumns } from "./aiColumns";
import { aiSortValue, defaultHidden, nextSort, shownColumns, sortRows, type GridColumn } from "./gridModel";
import { decodeGridView } from "./gridView";

interface Row { id: string; n?: number | null; s?: string }
const rows: Row[] = [
  { id: "a", n: 3, s: "beta" },
  { id: "b", n: null, s: "" },
  { id: "c", n: 10, s: "Alpha" },
  { id: "d", n: 1, s: "gamma 2" },
  { id: "e", s: "gamma 10" },
];
const columns: Array<GridColumn<Row>> = [
  { id: "id", label: "Id", required: true, cell: (r) => r.id, value: (r) => r.id },
  { id: "n", label: "N", cell: (r) => r.n, value: (r) => r.n },
  { id: "s", label: "S", hiddenByDefault: true, cell: (r) => r.s, value: (r) => r.s },
];
const ids = (list: Row[]) => list.map((r) => r.id);

describe("grid sorting", () => {
  it("sorts numbers and text, with blanks last in both directions", () => {
    expect(ids(sortRows(rows, columns, { field: "n", direction: "asc" }))).toEqual(["d", "a", "c", "b", "e"]);
    expect(ids(sortRows(rows, columns, { field: "n", direction: "desc" }))).toEqual(["c", "a", "d", "b", "e"]);
    // case-insensitive and numeric-aware ("gamma 2" before "gamma 10"); the empty string is a blank
    expect(ids(sortRows(rows, columns, { field: "s", direction: "asc" }))).toEqual(["c", "a", "d", "e", "b"]);
    expect(ids(sortRows(rows, columns, { field: "s", direction: "desc" }))).toEqual(["e", "d", "a", "c", "b"]);
  });

  it("leaves the order alone without a known column, and cycles asc → desc → none on the header", () => {
    expect(ids(sortRows(rows, columns, { field: "gone", direction: "asc" }))).toEqual(["a", "b", "c", "d", "e"]);
    expect(nextSort({ field: null, direction: "asc" }, "n")).toEqual({ field: "n", direction: "asc" });
    expect(nextSort({ field: "n", direction: "asc" }, "n")).toEqual({ field: "n", direction: "desc" });
    expect(nextSort({ field: "n", direction: "desc" }, "n")).toEqual({ field: null, direction: "asc" });
    expect(nextSort({ field: "n", direction: "desc" }, "s")).toEqual({ field: "s", direction: "asc" });
  });

  it("sorts an AI column Yes, No, Unknown, then the rows still evaluating or failed", () => {
    let state = aiColumnsReducer([], { type: "add", column: { id: "c1", name: "Mets?", criteria: "allows brain mets", type: "boolean" } });
    state = aiColumnsReducer(state, { type: "start", id: "c1", runId: 1, ids: ["a", "b", "c", "d", "e"] });
    const row = (id: string, value: string) => ({ type: "row" as const, id, value, display: value, reasoning: "", evidence: [] });
    for (const [id, value] of [["a", "NOT_MET"], ["c", "MET"], ["d", "UNKNOWN"]] as const) {
      state = aiColumnsReducer(state, { type: "event", id: "c1", runId: 1, event: row(id, value) } as never);
    }
    const column = state[0] as AIColumn;
    const aiCol: GridColumn<Row> = { id: "ai:Mets?", label: "Mets?", cell: () => null, value: (r) => aiSortValue(column, r.id) };
    expect(ids(sortRows(rows, [aiCol], { field: "ai:Mets?", direction: "asc" }))).toEqual(["c", "a", "d", "b", "e"]);
    expect(ids(sortRows(rows, [aiCol], { field: "ai:Mets?", direction: "desc" }))).toEqual(["d", "a", "c", "b", "e"]);
  });
});

describe("column visibility", () => {
  it("starts with the default-hidden columns hidden and never hides a required one", () => {
    expect(defaultHidden(columns)).toEqual(["s"]);
    expect(shownColumns(columns, new Set(["s", "id"])).map((c) => c.id)).toEqual(["id", "n"]);
  });
});

describe("saved view decoding", () => {
  it("keeps what it can from a view and drops what is malformed", () => {
    const view = decodeGridView({
      sort: { field: "ai:Mets?", direction: "desc" },
      hidden: ["sponsor", 3],
      aiColumns: [{ name: "Mets?", criteria: "allows", type: "boolean", filter: "yes" }, { name: "", criteria: "x" }, "junk"],
      charts: [{ id: "c1", kind: "bar", facet: "phase", filters: {} }, { id: "bad" }],
      filters: "nope",
      selected: ["NCT1", null, "NCT2"],
      collapsed: true,
    });
    expect(view.sort).toEqual({ field: "ai:Mets?", direction: "desc" });
    expect(view.hidden).toEqual(["sponsor"]);
    expect(view.aiColumns).toEqual([{ name: "Mets?", criteria: "allows", type: "boolean", filter: "yes" }]);
    expect(view.charts.map((c) => c.id)).toEqual(["c1"]);
    expect(view.filters).toEqual([]);
    expect(view.selected).toEqual(["NCT1", "NCT2"]);
    expect(view.collapsed).toBe(true);
    expect(decodeGridView({}).sort).toEqual({ field: null, direction: "asc" });
    expect(decodeGridView({}).hidden).toBeNull(); // the page's default columns, not every column
  });

  it("round-trips AI columns through their saved form", () => {
    const state = aiColumnsReducer([], { type: "add", column: { id: "c1", name: "Dose", criteria: "what dose", type: "text" } });
    const filtered = aiColumnsReducer(state, { type: "filter", id: "c1", filter: "answered" });
    expect(parseSavedAIColumns(JSON.parse(JSON.stringify(savedAIColumns(filtered))))).toEqual([
      { name: "Dose", criteria: "what dose", type: "text", filter: "answered" },
    ]);
  });
});
