/**
 * A chart's figures → an ECharts option. Pure (no DOM, no ECharts import), so it is unit-tested and
 * the library loads only when a chart is drawn. Every data item carries its raw facet value (`raw`)
 * so a click filters by the registered value, while axes and tooltips show readable labels.
 */
import type { FacetStats } from "../api/types";
import { valueLabel, type ChartKind } from "./chartSpec";
import type { ChartTheme } from "./theme";
import { mapCountryName } from "./countries";

export interface ChartData {
  stats: FacetStats;
  /** stacked_bar: the facet's counts once per value of the stacking facet. */
  stacks?: Array<{ facet: string; value: string; stats: FacetStats }>;
}

export interface Row {
  value: string;
  label: string;
  count: number;
}

/** The buckets as rows with labels: what the table view lists and every chart kind draws. */
export function chartRows(stats: FacetStats): Row[] {
  return stats.buckets.map((b) => ({ value: b.value, label: valueLabel(stats.facet, b.value), count: b.count }));
}

/** A year as a label: 1995, not the value axis's "1,995". */
export function yearLabel(value: number): string {
  return String(Math.round(value));
}

/** A timeline's rows as points in year order, the years between them at zero (a timeline facet lists every
 * year it has); null when a value is not a year, to draw the rows as categories instead. */
export function yearPoints(rows: Row[]): Array<{ year: number; count: number; raw?: string }> | null {
  const years = rows.map((r) => ({ year: Number(r.value), count: r.count, raw: r.value }));
  if (!years.length || years.some((p) => !/^\d{4}$/.test(p.raw))) return null;
  years.sort((a, b) => a.year - b.year);
  const out: Array<{ year: number; count: number; raw?: string }> = [];
  for (const point of years) {
    for (let gap = (out.at(-1)?.year ?? point.year) + 1; gap < point.year; gap++) out.push({ year: gap, count: 0 });
    out.push(point);
  }
  return out;
}

export interface ClickTarget {
  raw?: string;
  stackFacet?: string;
  stackValue?: string;
}

export function buildOption(kind: ChartKind, data: ChartData, theme: ChartTheme, title: string): Record<string, unknown> {
  const rows = chartRows(data.stats);
  const base = {
    color: theme.palette,
    textStyle: { color: theme.text },
    aria: { enabled: true, label: { description: `${title}: ${rows.map((r) => `${r.label} ${r.count}`).join(", ")}.` } },
    // Drawn on the canvas: the HTML tooltip writes inline style attributes, which the CSP (rightly) refuses.
    tooltip: { trigger: "item", renderMode: "richText", backgroundColor: theme.panel, borderColor: theme.border,
               textStyle: { color: theme.text } },
    animation: false,
  };
  const axisStyle = { axisLabel: { color: theme.muted }, axisLine: { lineStyle: { color: theme.border } },
                      splitLine: { lineStyle: { color: theme.border } } };
  if (kind === "pie" || kind === "donut") {
    return { ...base, legend: { type: "scroll", bottom: 0, textStyle: { color: theme.text } }, series: [{
      type: "pie", radius: kind === "donut" ? ["45%", "70%"] : "70%", center: ["50%", "45%"],
      label: { color: theme.text, formatter: "{b}: {c}" },
      data: rows.map((r) => ({ name: r.label, value: r.count, raw: r.value })),
    }] };
  }
  if (kind === "map") {
    const max = Math.max(1, ...rows.map((r) => r.count));
    return { ...base, visualMap: { min: 0, max, left: "left", bottom: 0, calculable: false, text: ["more", "fewer"],
                                    textStyle: { color: theme.muted }, inRange: { color: [theme.border, theme.palette[0]] } },
      series: [{ type: "map", map: "world", roam: false, emphasis: { label: { show: false } },
                 itemStyle: { borderColor: theme.panel, areaColor: theme.border },
                 data: rows.map((r) => ({ name: mapCountryName(r.value), value: r.count, raw: r.value })) }] };
  }
  if (kind === "stacked_bar" && data.stacks?.length) {
    return { ...base, tooltip: { ...base.tooltip, trigger: "axis" },
      legend: { type: "scroll", bottom: 0, textStyle: { color: theme.text } },
      grid: { left: 8, right: 16, top: 16, bottom: 40, containLabel: true },
      xAxis: { type: "category", data: rows.map((r) => r.label), ...axisStyle, axisLabel: { color: theme.muted, interval: 0, rotate: rows.length > 6 ? 30 : 0 } },
      yAxis: { type: "value", minInterval: 1, ...axisStyle },
      series: data.stacks.map((s) => {
        const counts = new Map(s.stats.buckets.map((b) => [b.value, b.count]));
        return { type: "bar", stack: "total", name: valueLabel(s.facet, s.value),
                 data: rows.map((r) => ({ value: counts.get(r.value) ?? 0, raw: r.value, stackFacet: s.facet, stackValue: s.value })) };
      }) };
  }
  if (kind === "timeline") {
    const years = yearPoints(rows);
    if (years) {
      // Years to scale: 1971, 1995 and 1998 are not three even steps, and a year with no record is a zero.
      return { ...base, tooltip: { ...base.tooltip, trigger: "axis" },
        grid: { left: 8, right: 16, top: 16, bottom: 8, containLabel: true },
        xAxis: { type: "value", min: "dataMin", max: "dataMax", minInterval: 1, ...axisStyle,
                 axisLabel: { color: theme.muted, formatter: yearLabel } },
        yAxis: { type: "value", minInterval: 1, ...axisStyle },
        series: [{ type: "line", areaStyle: { opacity: 0.2 }, symbolSize: 6, triggerLineEvent: true,
                   data: years.map((p) => ({ value: [p.year, p.count], ...(p.raw ? { raw: p.raw } : {}) })) }] };
    }
    return { ...base, tooltip: { ...base.tooltip, trigger: "axis" },
      grid: { left: 8, right: 16, top: 16, bottom: 8, containLabel: true },
      xAxis: { type: "category", data: rows.map((r) => r.label), boundaryGap: false, ...axisStyle },
      yAxis: { type: "value", minInterval: 1, ...axisStyle },
      series: [{ type: "line", areaStyle: { opacity: 0.2 }, symbolSize: 6, triggerLineEvent: true,
                 data: rows.map((r) => ({ value: r.count, raw: r.value })) }] };
  }
  // bar and histogram: categorical bars read best horizontally, long labels and all.
  const horizontal = kind === "bar";
  const categories = { type: "category", data: rows.map((r) => r.label), ...axisStyle,
                       axisLabel: { color: theme.muted, width: 180, overflow: "truncate", interval: 0 },
                       ...(horizontal ? { inverse: true } : {}) };
  const values = { type: "value", minInterval: 1, ...axisStyle };
  return { ...base, grid: { left: 8, right: 24, top: 8, bottom: 8, containLabel: true },
    xAxis: horizontal ? values : categories, yAxis: horizontal ? categories : values,
    series: [{ type: "bar", barCategoryGap: kind === "histogram" ? "2%" : "30%",
               label: { show: true, position: horizontal ? "right" : "top", color: theme.text },
               data: rows.map((r) => ({ value: r.count, raw: r.value })) }] };
}
