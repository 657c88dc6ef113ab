import { describe, expect, it, vi } from "vitest";
import type { FacetStats } from "../api/types";
import { buildOption, yearLabel, yearPoints } from "./chartOption";
import { DEFAULT_CANDIDATES, defaultFacet, informativeness, pickFacet } from "./defaultChart";

const theme = { text: "#111", muted: "#555", border: "#ccc", panel: "#fff", palette: ["#1f5fbf"] };

function facet(name: string, counts: Record<string, number>, extra: Partial<FacetStats> = {}): FacetStats {
  const buckets = Object.entries(counts).map(([value, count]) => ({ value, count }));
  const basis = buckets.reduce((a, b) => a + b.count, 0);
  return { facet: name, label: name, kind: "categorical", multi_valued: false, distinct: buckets.length,
           missing: 0, basis, other: 0, sampled: false, note: null, buckets, ...extra };
}

describe("the default chart", () => {
  const candidates = DEFAULT_CANDIDATES.trialscout;

  it("skips a field whose records all share one value", () => {
    const phase = facet("phase", { PHASE3: 80 });
    const status = facet("status", { RECRUITING: 50, COMPLETED: 30 });
    expect(informativeness(phase)).toBe(0);
    expect(pickFacet([phase, status], candidates)).toBe("status");
  });

  it("picks the field whose counts are spread over the most values, earlier ones winning ties", () => {
    const phase = facet("phase", { PHASE2: 40, PHASE3: 38, PHASE1: 2 });
    const status = facet("status", { RECRUITING: 20, COMPLETED: 20, TERMINATED: 20, WITHDRAWN: 20 });
    expect(pickFacet([phase, status], candidates)).toBe("status");
    const even = facet("phase", { PHASE1: 20, PHASE2: 20, PHASE3: 20, PHASE4: 20 });
    expect(pickFacet([status, even], candidates)).toBe("phase");
  });

  it("weighs a field by the share of records that have a value", () => {
    const years = facet("start_year", { 2001: 10, 2005: 10, 2010: 10, 2015: 10 }, { basis: 400, missing: 360 });
    const status = facet("status", { RECRUITING: 300, COMPLETED: 100 });
    expect(pickFacet([years, status], candidates)).toBe("status");
  });

  it("caps a long run of values: forty even years do not beat eight even sponsor classes", () => {
    const years = facet("start_year", Object.fromEntries(Array.from({ length: 40 }, (_, i) => [String(1980 + i), 5])));
    const classes = facet("sponsor_class", Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`C${i}`, 25])));
    expect(informativeness(years)).toBeCloseTo(informativeness(classes));
    expect(pickFacet([classes, years], candidates)).toBe("start_year"); // the tie goes to the earlier candidate
  });

  it("falls back to the first candidate when nothing is told apart, and asks for all candidates at once", async () => {
    expect(pickFacet([facet("phase", { PHASE3: 9 }), facet("status", { RECRUITING: 9 })], candidates)).toBe("phase");
    const { api } = await import("../api/client");
    const trialStats = vi.spyOn(api, "trialStats").mockResolvedValue({
      source: "offline", total: 80, filters: {}, sampled: false, note: null,
      facets: [facet("phase", { PHASE3: 80 }), facet("study_type", { INTERVENTIONAL: 60, OBSERVATIONAL: 20 })] });
    expect(await defaultFacet({ app: "trialscout", search: { phase: ["PHASE3"] } })).toBe("study_type");
    expect(trialStats.mock.calls[0][0]).toMatchObject({ facets: [...candidates] });
    expect(await defaultFacet({ app: "trialscout", search: null })).toBe("phase");
  });
});

describe("count and time axes", () => {
  const years = facet("start_year", { 1998: 1, 1971: 2, 1995: 1 }, { kind: "timeline" });

  it("draws years to scale on a value axis, the years between at zero", () => {
    const option = buildOption("timeline", { stats: years }, theme, "Start year") as {
      xAxis: { type: string; minInterval: number; axisLabel: { formatter: (v: number) => string } };
      yAxis: { type: string; minInterval: number }; series: Array<{ data: Array<{ value: number[]; raw?: string }> }> };
    expect(option.xAxis).toMatchObject({ type: "value", minInterval: 1 });
    expect(option.xAxis.axisLabel.formatter(1995)).toBe("1995");
    expect(option.yAxis.minInterval).toBe(1);
    const data = option.series[0].data;
    expect(data).toHaveLength(1998 - 1971 + 1);
    expect(data[0]).toEqual({ value: [1971, 2], raw: "1971" });
    expect(data[1]).toEqual({ value: [1972, 0] });
    expect(data.at(-1)).toEqual({ value: [1998, 1], raw: "1998" });
  });

  it("keeps categories for values that are not years", () => {
    const bins = facet("x", { "0-10": 2, "10-50": 3 });
    expect(yearPoints([{ value: "0-10", label: "0-10", count: 2 }])).toBeNull();
    const option = buildOption("timeline", { stats: bins }, theme, "X") as { xAxis: { type: string } };
    expect(option.xAxis.type).toBe("category");
    expect(yearLabel(2003.0000001)).toBe("2003");
  });

  it("ticks counts in whole numbers on bars, histograms and stacks", () => {
    const phase = facet("phase", { PHASE3: 1 });
    const bar = buildOption("bar", { stats: phase }, theme, "Phase") as { xAxis: { minInterval: number } };
    const histogram = buildOption("histogram", { stats: phase }, theme, "E") as { yAxis: { minInterval: number } };
    const stacked = buildOption("stacked_bar", { stats: phase, stacks: [{ facet: "status", value: "RECRUITING", stats: phase }] },
                                theme, "S") as { yAxis: { minInterval: number } };
    expect([bar.xAxis.minInterval, histogram.yAxis.minInterval, stacked.yAxis.minInterval]).toEqual([1, 1, 1]);
  });
});
