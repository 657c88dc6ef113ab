import { fireEvent, render, renderHook, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { phases, stats } from "../test/stats";
import { buildOption, chartRows } from "./chartOption";
import { chartFromPayload } from "./chartSpec";
import { ChartsPanel, useCharts } from "./ChartsPanel";
import { ChartView } from "./ChartView";
import { fetchStats, type StatsScope } from "./statsScope";

const theme = { text: "#111", muted: "#555", border: "#ccc", panel: "#fff", palette: ["#1f5fbf", "#e69f00"] };

describe("chart options", () => {
  it("label enums readably and keep the raw value for clicks", () => {
    expect(chartRows(phases).map((r) => r.label)).toEqual(["Phase 2", "Phase 3", "Early Phase 1"]);
    const option = buildOption("bar", { stats: phases }, theme, "Phase") as { series: Array<{ data: Array<{ raw: string }> }>;
      yAxis: { data: string[] }; aria: { label: { description: string } } };
    expect(option.yAxis.data).toEqual(["Phase 2", "Phase 3", "Early Phase 1"]);
    expect(option.series[0].data.map((d) => d.raw)).toEqual(["PHASE2", "PHASE3", "EARLY_PHASE1"]);
    expect(option.aria.label.description).toContain("Phase 2 20");
  });

  it("name countries as the map does, and draw pies and timelines", () => {
    const countries = { ...phases, facet: "country", buckets: [{ value: "United States", count: 5 }, { value: "Korea, Republic of", count: 2 }] };
    const map = buildOption("map", { stats: countries }, theme, "Countries") as { series: Array<{ data: Array<{ name: string; raw: string }> }> };
    expect(map.series[0].data.map((d) => [d.name, d.raw])).toEqual([
      ["United States of America", "United States"], ["South Korea", "Korea, Republic of"]]);
    const donut = buildOption("donut", { stats: phases }, theme, "Phase") as { series: Array<{ type: string; radius: string[] }> };
    expect(donut.series[0]).toMatchObject({ type: "pie", radius: ["45%", "70%"] });
    const line = buildOption("timeline", { stats: phases }, theme, "Phase") as { series: Array<{ type: string }> };
    expect(line.series[0].type).toBe("line");
  });

  it("read a chart payload for this page, or say why not", () => {
    expect(chartFromPayload("trialscout", { kind: "pie", facet: "status", filters: { phase: ["PHASE3"] } }))
      .toMatchObject({ kind: "pie", facet: "status", filters: { phase: ["PHASE3"] } });
    expect(chartFromPayload("trialscout", { kind: "stacked_bar", facet: "phase" }).kind).toBe("bar");
    expect(() => chartFromPayload("tablizer", { kind: "bar", facet: "phase" })).toThrow(/no "phase" chart/);
  });
});

describe("ChartView", () => {
  it("fetches the page's statistics and lists them in a table view whose rows filter", async () => {
    const trialStats = vi.fn().mockResolvedValue(stats(phases));
    const { api } = await import("../api/client");
    vi.spyOn(api, "trialStats").mockImplementation(trialStats);
    const onSelect = vi.fn();
    const scope: StatsScope = { app: "trialscout", search: { condition: "melanoma" } };
    render(<ChartView scope={scope} spec={{ id: "c1", kind: "bar", facet: "phase", filters: {} }} onSelect={onSelect} />);
    await waitFor(() => expect(screen.getByTestId("chart-footnote").textContent).toContain("Over 40 records"));
    expect(trialStats.mock.calls[0][0]).toMatchObject({ search: { condition: "melanoma" }, facets: ["phase"] });
    expect(screen.getByTestId("chart-footnote").textContent).toContain("4 with no phase");
    fireEvent.click(screen.getByTestId("chart-table-toggle"));
    const table = screen.getByTestId("chart-table");
    expect(within(table).getByText("Phase 3")).toBeTruthy();
    expect(table.textContent).not.toContain("PHASE3");
    fireEvent.click(within(table).getByText("Phase 3"));
    expect(onSelect).toHaveBeenCalledWith({ facet: "phase", value: "PHASE3" });
  });
});

describe("a local facet (TrialScout's fit column)", () => {
  const fit = { ...phases, facet: "fit", label: "Fit", multi_valued: false, missing: 0, basis: 5, distinct: 3,
                buckets: [{ value: "ELIGIBLE", count: 2 }, { value: "EXCLUDED", count: 2 }, { value: "NOT_RELEVANT", count: 1 }] };

  it("is offered and drawn from the page's own counts, and a click narrows the table the page's way", async () => {
    const { api } = await import("../api/client");
    const trialStats = vi.spyOn(api, "trialStats").mockResolvedValue(stats(phases));
    const select = vi.fn();
    const onSelect = vi.fn();
    const scope: StatsScope = { app: "trialscout", search: { condition: "melanoma" }, local: { fit: { stats: fit, select } } };
    const { result } = renderHook(() => useCharts("trialscout"));
    const { rerender } = render(<ChartsPanel scope={scope} state={result.current} onSelect={onSelect} />);
    fireEvent.click(screen.getByTestId("charts-toggle"));
    await waitFor(() => expect(result.current.charts.length).toBe(1)); // the first chart's field is chosen from the data
    rerender(<ChartsPanel scope={scope} state={result.current} onSelect={onSelect} />);
    const picker = screen.getByTestId("chart-facet") as HTMLSelectElement;
    expect([...picker.options].map((o) => o.textContent)).toContain("Fit");
    fireEvent.change(picker, { target: { value: "fit" } });
    expect([...(screen.getByTestId("chart-kind") as HTMLSelectElement).options].map((o) => o.value)).toEqual(["bar", "pie", "donut"]);
    fireEvent.click(screen.getByTestId("chart-add"));
    rerender(<ChartsPanel scope={scope} state={result.current} onSelect={onSelect} />);
    const chart = screen.getAllByTestId("chart").find((c) => c.dataset.facet === "fit") as HTMLElement;
    await waitFor(() => expect(within(chart).getByTestId("chart-footnote").textContent).toContain("Over 5 records"));
    expect(trialStats.mock.calls.every(([body]) => !(body as { facets: string[] }).facets.includes("fit"))).toBe(true);
    fireEvent.click(within(chart).getByTestId("chart-table-toggle"));
    const table = within(chart).getByTestId("chart-table");
    expect(table.textContent).toContain("Not relevant");
    expect(table.textContent).not.toContain("NOT_RELEVANT");
    fireEvent.click(within(table).getByText("Excluded"));
    expect(select).toHaveBeenCalledWith("EXCLUDED");
    expect(onSelect).not.toHaveBeenCalled();
  });

  it("is not offered without counts, and a kept chart of it says what to load", async () => {
    const scope: StatsScope = { app: "trialscout", search: { condition: "melanoma" } };
    await expect(fetchStats(scope, ["fit"], {}, 15)).rejects.toThrow(/Load a screened patient/);
    const limited = await fetchStats({ ...scope, local: { fit: { stats: fit } } }, ["fit"], {}, 2);
    expect(limited.facets[0].buckets.map((b) => b.value)).toEqual(["ELIGIBLE", "EXCLUDED"]);
    expect(limited.total).toBe(5);
    const { result } = renderHook(() => useCharts("trialscout"));
    render(<ChartsPanel scope={scope} state={{ ...result.current, open: true }} onSelect={() => {}} />);
    expect([...(screen.getByTestId("chart-facet") as HTMLSelectElement).options].map((o) => o.value)).not.toContain("fit");
  });
});
