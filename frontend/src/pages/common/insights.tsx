/**
 * What a results page's insights (its charts panel and table filters) offer the page, however they are wired:
 * Accept for `chart` and `filter_suggestion` cards, the panel (charts, filter chips, a notice), the rows
 * the filters keep, and the pinned charts as a report's figures. `useArticleInsights` and `useTrialInsights` differ in how a chart
 * click filters; the rest is this.
 */
import { useCallback, type ReactNode } from "react";
import type { ChartSelection } from "../../charts/ChartView";
import { ChartsPanel, type useCharts } from "../../charts/ChartsPanel";
import { reportCharts } from "../../charts/reportCharts";
import type { StatsScope } from "../../charts/statsScope";
import { FilterChips } from "./FilterChips";
import { screenContext } from "./screenContext";
import { applyTableFilters, filterFromSuggestion, type RowFields, type TableFilter, type useTableFilters } from "./tableFilters";

export function useInsightsParts<Row>({ scope, charts, filters, rowFields, fieldLabels, notice, onSelect, onRemove, onClear }: {
  scope: StatsScope;
  charts: ReturnType<typeof useCharts>;
  filters: ReturnType<typeof useTableFilters>;
  rowFields: RowFields<Row>;
  fieldLabels: Readonly<Record<string, string>>;
  notice: string | null;
  onSelect: (selection: ChartSelection) => void;
  onRemove: (filter: TableFilter) => void;
  onClear?: () => void;
}) {
  const payloadHandlers = {
    chart: (data: Record<string, unknown>) => charts.pin(data),
    filter_suggestion: (data: Record<string, unknown>) => filters.add(filterFromSuggestion(data, rowFields, fieldLabels)),
  };
  const panel: ReactNode = (
    <>
      <ChartsPanel scope={scope} state={charts} onSelect={onSelect} />
      <FilterChips filters={filters.filters} onRemove={onRemove} onClear={onClear} />
      {notice && <p className="muted small" role="status">{notice}</p>}
    </>
  );
  /** The rows the table filters keep. */
  const narrow = useCallback((rows: Row[]) => applyTableFilters(rows, filters.filters, rowFields), [filters.filters, rowFields]);
  /** The panel's charts as figures, for a report. */
  const chartFigures = useCallback(() => reportCharts(scope, charts.charts), [scope, charts.charts]);
  /** The chips, the pinned charts and the counts, for the page context. */
  const screen = useCallback((loaded: number, shown: number) =>
    screenContext({ filters: filters.filters, charts: charts.charts, loaded, shown }), [filters.filters, charts.charts]);
  return { payloadHandlers, panel, narrow, chartFigures, screen };
}
