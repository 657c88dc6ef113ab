import { describe, expect, it } from "vitest";
import { aiColumnsReducer } from "./aiColumnState";
import { describeSelection, fitWords, reportTitle } from "./selectionReport";

interface T { id: string; phase: string[]; country?: string }
const rows: T[] = [{ id: "A", phase: ["Phase 3"] }, { id: "B", phase: ["Phase 3", "Phase 2"] }, { id: "C", phase: [] }];
const facets = [{ label: "Phase", values: (t: T) => t.phase }];

describe("a report of the selected rows", () => {
  it("fits its title at a word, never mid-word", () => {
    const long = "melanoma pembrolizumab · Phase 3 · Recruiting · Spain · Phase 2 · adults with brain metastases ".repeat(4);
    const title = reportTitle(3, "trial", long);
    expect(title.length).toBeLessThanOrEqual(200);
    expect(title.startsWith("Shortlist: 3 trials · melanoma")).toBe(true);
    expect(title.endsWith("…")).toBe(true);
    const lastWord = title.slice(0, -1).split(" ").pop()!;
    expect(long.split(/\s+/)).toContain(lastWord);
    expect(reportTitle(1, "article", "")).toBe("Shortlist: 1 article");
    expect(fitWords("short", 10)).toBe("short");
  });

  it("counts only the selected rows, with their AI verdicts, and charts them", () => {
    let cols = aiColumnsReducer([], { type: "add", column: { id: "c", name: "Mets?", criteria: "x", type: "boolean" } });
    cols = aiColumnsReducer(cols, { type: "start", id: "c", runId: 1, ids: ["A", "B", "C"] });
    cols = aiColumnsReducer(cols, { type: "event", id: "c", runId: 1, event: { type: "row", id: "A", value: "MET", display: "Yes", reasoning: "", evidence: [] } } as never);
    const { summary, charts } = describeSelection(rows, (t) => t.id, "trial", facets, cols);
    expect(summary).toContain("3 selected trials.");
    expect(summary).toContain("**Phase**: Phase 3 2, Phase 2 1");
    expect(summary).toContain("“Mets?”**: yes 1, pending 2");
    expect(charts).toEqual([{ title: "Phase (3 selected)", kind: "bar", points: [{ label: "Phase 3", value: 2 }, { label: "Phase 2", value: 1 }] }]);
    // With charts pinned, the report redraws those (over the selected rows) and no others.
    const two = [...facets.map((f) => ({ ...f, chart: "phase" })), { label: "Id", chart: "id", values: (t: T) => [t.id] }];
    expect(describeSelection(rows, (t) => t.id, "trial", two, [], ["id"]).charts.map((c) => c.title)).toEqual(["Id (3 selected)"]);
  });

  it("with only pinned charts it has no facet for, draws the one most informative facet, not every one", () => {
    interface R { id: string; phase: string; status: string; sponsor: string }
    const spread: R[] = ["A", "B", "C", "D"].map((id, i) => ({ id, phase: "Phase 3", status: ["Recruiting", "Completed"][i % 2],
                                                                 sponsor: `Sponsor ${id}` }));
    const three = [
      { label: "Phase", chart: "phase", values: (r: R) => [r.phase] },
      { label: "Status", chart: "status", values: (r: R) => [r.status] },
      { label: "Sponsor", chart: "sponsor", values: (r: R) => [r.sponsor] },
    ];
    const titles = (pinned: string[]) => describeSelection(spread, (r) => r.id, "trial", three, [], pinned).charts.map((c) => c.title);
    // Every row is Phase 3 (one bar says nothing) and Sponsor is a long tail the panel never opens with: Status.
    expect(titles(["sponsor_class"])).toEqual(["Status (4 selected)"]);
    expect(titles(["sponsor_class", "phase"])).toEqual(["Phase (4 selected)"]);
    expect(titles([])).toEqual(["Phase (4 selected)", "Status (4 selected)", "Sponsor (4 selected)"]);
  });
});
