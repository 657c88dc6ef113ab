/**
 * TrialScout's charts and table filters in one hook, so the page only places them: the charts panel over
 * the submitted search, the filter chips, the rows the filters keep, and Accept for `chart` and
 * `filter_suggestion` cards.
 */
import { useCallback, useMemo, useState } from "react";
import type { TrialSummary } from "../../api/types";
import { useCharts } from "../../charts/ChartsPanel";
import type { ChartSelection } from "../../charts/ChartView";
import type { LocalCounts, StatsScope } from "../../charts/statsScope";
import { useInsightsParts } from "../common/insights";
import { useTableFilters, type TableFilter } from "../common/tableFilters";
import { TRIAL_FIELD_LABELS, TRIAL_ROW_FIELDS, trialChartFilter, trialStatsSearch } from "./trialFilters";
import type { TrialForm } from "./trialscoutContext";

export function useTrialInsights({ submitted, currentForm, setForm, search, local }: {
  /** The form of the search that filled the table (null before the first search). */
  submitted: TrialForm | null;
  currentForm: () => TrialForm;
  setForm: (form: TrialForm) => void;
  search: (form: TrialForm) => unknown;
  /** The page's own facets' counts (the loaded screening's verdicts), charted beside the search's. */
  local?: Readonly<Record<string, LocalCounts>>;
}) {
  const filters = useTableFilters();
  const charts = useCharts("trialscout");
  const [notice, setNotice] = useState<string | null>(null);
  const [undos] = useState(() => new Map<string, (form: TrialForm) => TrialForm>());

  const scope = useMemo<StatsScope>(() => ({ app: "trialscout", search: submitted ? trialStatsSearch(submitted) : null,
                                             pin: charts.pin, local }), [submitted, charts.pin, local]);

  const applySearch = useCallback((next: TrialForm) => {
    setForm(next);
    void search(next);
  }, [setForm, search]);

  const onSelect = useCallback((selection: ChartSelection) => {
    const picked = trialChartFilter(selection);
    if (!picked) {
      setNotice(`The table's rows have no ${selection.facet.replace(/_/g, " ")}, so they cannot be filtered by it.`);
      return;
    }
    setNotice(null);
    filters.add(picked.filter);
    if (picked.apply && picked.undo) {
      undos.set(picked.filter.id, picked.undo);
      applySearch(picked.apply(currentForm()));
    }
  }, [filters, undos, applySearch, currentForm]);

  const remove = useCallback((f: TableFilter) => {
    filters.remove(f.id);
    const undo = undos.get(f.id);
    if (undo) {
      undos.delete(f.id);
      applySearch(undo(currentForm()));
    }
  }, [filters, undos, applySearch, currentForm]);

  const { payloadHandlers, panel, narrow, chartFigures, screen } = useInsightsParts<TrialSummary>({
    scope, charts, filters, rowFields: TRIAL_ROW_FIELDS, fieldLabels: TRIAL_FIELD_LABELS, notice, onSelect, onRemove: remove,
  });

  return { scope, narrow, payloadHandlers, panel, filters: filters.filters, chartFigures, screen,
           charts: charts.charts, setCharts: charts.replace, setFilters: filters.setFilters };
}
