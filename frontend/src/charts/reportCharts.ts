/**
 * The charts panel's charts as figures for a report: each chart's counts over the page's search, fetched
 * from the stats route as the panel draws them, with readable labels. A report draws its charts itself
 * (inline SVG, PDF bars), so it needs the numbers, not the canvas.
 */
import type { ReportChart } from "../api/types";
import { chartRows } from "./chartOption";
import { chartTitle, type ChartSpec } from "./chartSpec";
import { fetchStats, type StatsScope } from "./statsScope";

const MAX_BARS = 15;

export async function reportCharts(scope: StatsScope, specs: readonly ChartSpec[]): Promise<ReportChart[]> {
  if (!scope.search || specs.length === 0) return [];
  const charts = await Promise.all(
    specs.map(async (spec) => {
      const response = await fetchStats(scope, [spec.facet], spec.filters, MAX_BARS);
      const stats = response.facets.find((f) => f.facet === spec.facet);
      const points = stats ? chartRows(stats).map((row) => ({ label: row.label.slice(0, 200), value: row.count })) : [];
      return { title: chartTitle(scope.app, spec).slice(0, 200), kind: spec.kind, points };
    }),
  );
  return charts.filter((c) => c.points.length > 0);
}
