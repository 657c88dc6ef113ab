/**
 * Tablizer's charts and table filters: the charts panel over the submitted PubMed search, chips for the
 * filters that narrow the shown rows (a chart click, an accepted `filter_suggestion`), and pinning charts.
 */
import { useCallback, useMemo, useState } from "react";
import type { Article } from "../../api/types";
import { useCharts } from "../../charts/ChartsPanel";
import type { ChartSelection } from "../../charts/ChartView";
import { facetLabel, valueLabel } from "../../charts/chartSpec";
import type { StatsScope } from "../../charts/statsScope";
import { useInsightsParts } from "../common/insights";
import { facetFilter, useTableFilters } from "../common/tableFilters";
import { ARTICLE_FIELD_LABELS, ARTICLE_ROW_FIELDS } from "./articleFilters";

export function useArticleInsights(submitted: { query: string; dateStart: string; dateEnd: string } | null) {
  const filters = useTableFilters();
  const charts = useCharts("tablizer");
  const [notice, setNotice] = useState<string | null>(null);
  const search = submitted
    ? { query: submitted.query, ...(submitted.dateStart ? { date_start: submitted.dateStart } : {}),
        ...(submitted.dateEnd ? { date_end: submitted.dateEnd } : {}) }
    : null;
  const searchKey = JSON.stringify(search);
  // eslint-disable-next-line react-hooks/exhaustive-deps -- keyed by value
  const scope = useMemo<StatsScope>(() => ({ app: "tablizer", search, pin: charts.pin }), [searchKey, charts.pin]);

  const onSelect = useCallback((s: ChartSelection) => {
    if (!(s.facet in ARTICLE_ROW_FIELDS)) {
      setNotice(`The table's rows have no ${s.facet.replace(/_/g, " ")}.`);
      return;
    }
    setNotice(null);
    filters.add(facetFilter(s.facet, facetLabel("tablizer", s.facet), s.value, valueLabel(s.facet, s.value)));
  }, [filters]);

  const { payloadHandlers, panel, narrow, chartFigures, screen } = useInsightsParts<Article>({
    scope, charts, filters, rowFields: ARTICLE_ROW_FIELDS, fieldLabels: ARTICLE_FIELD_LABELS, notice, onSelect,
    onRemove: (f) => filters.remove(f.id), onClear: filters.clear,
  });

  return { scope, narrow, payloadHandlers, panel, chartFigures, screen,
           charts: charts.charts, setCharts: charts.replace, filters: filters.filters, setFilters: filters.setFilters };
}
