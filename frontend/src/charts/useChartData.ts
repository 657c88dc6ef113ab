import { useEffect, useState } from "react";
import type { StatsResponse } from "../api/types";
import type { ChartData } from "./chartOption";
import type { ChartSpec } from "./chartSpec";
import { fetchStats, type StatsScope } from "./statsScope";

const LIMITS: Partial<Record<ChartSpec["kind"], number>> = { map: 100, pie: 8, donut: 8, stacked_bar: 10 };
const STACKS = 5;

export interface ChartState {
  data: ChartData | null;
  response: StatsResponse | null;
  error: string | null;
  loading: boolean;
}

/** The figures a chart draws, fetched for the page's current search (again whenever it changes). */
export function useChartData(scope: StatsScope | null, spec: ChartSpec): ChartState {
  const [state, setState] = useState<ChartState>({ data: null, response: null, error: null, loading: false });
  const searchKey = JSON.stringify(scope?.search ?? null);
  // A local facet's counts change without a new search (a screening's verdicts arriving).
  const specKey = JSON.stringify([spec.kind, spec.facet, spec.stackBy, spec.filters, scope?.local?.[spec.facet]?.stats]);

  useEffect(() => {
    if (!scope?.search) {
      setState({ data: null, response: null, error: null, loading: false });
      return;
    }
    const controller = new AbortController();
    const limit = LIMITS[spec.kind] ?? 15;
    setState((s) => ({ ...s, loading: true, error: null }));
    (async () => {
      const stacking = spec.kind === "stacked_bar" && spec.stackBy;
      const response = await fetchStats(scope, stacking ? [spec.facet, spec.stackBy as string] : [spec.facet],
                                        spec.filters, limit, controller.signal);
      const stats = response.facets.find((f) => f.facet === spec.facet);
      if (!stats) throw new Error("The statistics did not include this facet.");
      let stacks: ChartData["stacks"];
      if (stacking) {
        const by = response.facets.find((f) => f.facet === spec.stackBy);
        const values = (by?.buckets ?? []).slice(0, STACKS).map((b) => b.value);
        stacks = await Promise.all(values.map(async (value) => {
          const split = await fetchStats(scope, [spec.facet], { ...spec.filters, [spec.stackBy as string]: [value] },
                                         100, controller.signal);
          return { facet: spec.stackBy as string, value, stats: split.facets[0] };
        }));
      }
      if (!controller.signal.aborted) setState({ data: { stats, stacks }, response, error: null, loading: false });
    })().catch((err: unknown) => {
      if (controller.signal.aborted) return;
      setState({ data: null, response: null, error: err instanceof Error ? err.message : String(err), loading: false });
    });
    return () => controller.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps -- keyed by value, not identity
  }, [scope?.app, searchKey, specKey]);

  return state;
}
