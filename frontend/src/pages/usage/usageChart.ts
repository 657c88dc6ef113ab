/**
 * The usage page's figures: per day, one stacked series per model, in estimated dollars or in tokens; and
 * the ECharts option that draws them (the charts panel's ECharts and theme, imported as they are).
 */
import type { ChartTheme } from "../../charts/theme";
import type { UsageReport, UsageRow } from "../../api/types";

export type UsageMetric = "cost" | "tokens";

export interface UsageSeries {
  days: string[];
  series: { model: string; values: number[] }[];
}

/** Every token the model read or wrote for a row: input, output and both kinds of cached input. */
export function tokensOf(row: Pick<UsageRow, "input_tokens" | "output_tokens" | "cache_read_input_tokens"
  | "cache_creation_input_tokens">): number {
  return row.input_tokens + row.output_tokens + row.cache_read_input_tokens + row.cache_creation_input_tokens;
}

export function usageSeries(report: UsageReport, metric: UsageMetric): UsageSeries {
  const days = report.by_day.map((d) => d.key);
  const at = new Map(days.map((d, i) => [d, i]));
  const byModel = new Map<string, number[]>();
  for (const row of report.rows) {
    const values = byModel.get(row.model) ?? days.map(() => 0);
    const i = at.get(row.day);
    if (i === undefined) continue;
    values[i] += metric === "cost" ? row.cost_usd : tokensOf(row);
    byModel.set(row.model, values);
  }
  const series = [...byModel.entries()].map(([model, values]) => ({ model, values }))
    .sort((a, b) => a.model.localeCompare(b.model));
  return { days, series };
}

export function formatUsd(value: number): string {
  return `$${value < 1 && value > 0 ? value.toFixed(4) : value.toFixed(2)}`;
}

export function usageOption(data: UsageSeries, metric: UsageMetric, theme: ChartTheme): Record<string, unknown> {
  const label = metric === "cost" ? "Estimated cost (USD)" : "Tokens";
  return {
    color: theme.palette,
    animation: false,  // an admin page read once: the figures at once, not grown into
    aria: { enabled: true },
    textStyle: { color: theme.text },
    tooltip: { trigger: "axis" },
    legend: { top: 0, textStyle: { color: theme.text } },
    grid: { left: 64, right: 16, top: 36, bottom: 48 },
    xAxis: { type: "category", data: data.days, axisLabel: { color: theme.muted }, axisLine: { lineStyle: { color: theme.border } } },
    yAxis: { type: "value", name: label, nameTextStyle: { color: theme.muted }, axisLabel: { color: theme.muted },
      splitLine: { lineStyle: { color: theme.border } } },
    series: data.series.map((s) => ({ name: s.model, type: "bar", stack: "usage", data: s.values })),
  };
}
