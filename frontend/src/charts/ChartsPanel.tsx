/**
 * The charts panel beside a results table: charts over the whole result set of the page's search,
 * added from a facet and a kind, or pinned from the conversation (Accept on a `chart` card). A click
 * on a bar, slice, point or country — or on a row of a chart's table view — filters the table.
 */
import { useCallback, useRef, useState } from "react";
import { ChartView, type ChartSelection } from "./ChartView";
import { CHART_KINDS, FACETS, LOCAL_FACETS, LOCAL_KINDS, chartFromPayload, newChart, type ChartKind, type ChartSpec,
  type StatsApp } from "./chartSpec";
import { defaultFacet } from "./defaultChart";
import type { StatsScope } from "./statsScope";

/** The page's charts and whether the panel is open; `pin` takes a `chart` payload's data. */
export function useCharts(app: StatsApp) {
  const [charts, setCharts] = useState<ChartSpec[]>([]);
  const [open, setOpen] = useState(false);
  const add = useCallback((spec: ChartSpec) => {
    setCharts((list) => [...list, spec]);
    setOpen(true);
  }, []);
  const pin = useCallback((data: Record<string, unknown>) => add(chartFromPayload(app, data)), [add, app]);
  const remove = useCallback((id: string) => setCharts((list) => list.filter((c) => c.id !== id)), []);
  /** Put back the pinned charts a saved view kept. */
  const replace = useCallback((list: ChartSpec[]) => {
    setCharts(list);
    setOpen(list.length > 0);
  }, []);
  return { charts, open, setOpen, add, pin, remove, replace };
}

export type ChartsState = ReturnType<typeof useCharts>;

export function ChartsPanel({ scope, state, onSelect }: {
  scope: StatsScope;
  state: ChartsState;
  onSelect: (selection: ChartSelection) => void;
}) {
  const searched = FACETS[scope.app];
  const facets = [...searched, ...LOCAL_FACETS[scope.app].filter((f) => scope.local?.[f.facet])];
  const [facet, setFacet] = useState(facets[0].facet);
  const [kind, setKind] = useState<ChartKind | "">("");
  const [stackBy, setStackBy] = useState(facets[1]?.facet ?? facets[0].facet);
  const local = !searched.some((f) => f.facet === facet);
  const chosenKind = kind || facets.find((f) => f.facet === facet)?.kind || "bar";
  // A click on a local facet's value narrows the table the page's own way (e.g. the verdict filter).
  const select = (selection: ChartSelection) => {
    const own = scope.local?.[selection.facet]?.select;
    if (own) own(selection.value);
    else onSelect(selection);
  };

  const opening = useRef(false);  // a second click while the first chart's field is chosen adds no second chart
  const toggle = async () => {
    if (state.open || state.charts.length > 0) return state.setOpen(!state.open);
    if (opening.current) return;
    opening.current = true;
    try {
      state.add(newChart(scope.app, await defaultFacet(scope)));
    } finally {
      opening.current = false;
    }
  };
  const addChart = () => {
    const spec = newChart(scope.app, facet, chosenKind);
    state.add(chosenKind === "stacked_bar" ? { ...spec, stackBy } : spec);
  };

  return (
    <section className="charts-panel" aria-label="Charts" data-testid="charts-panel">
      <button type="button" className="charts-toggle" aria-expanded={state.open} data-testid="charts-toggle" onClick={toggle}>
        {state.open ? "Hide charts" : `Charts${state.charts.length ? ` (${state.charts.length})` : ""}`}
      </button>
      {state.open && (
        <>
          <div className="charts-add" role="group" aria-label="Add a chart">
            <label>
              Chart{" "}
              <select value={facet} data-testid="chart-facet" onChange={(e) => { setFacet(e.target.value); setKind(""); }}>
                {facets.map((f) => <option key={f.facet} value={f.facet}>{f.label}</option>)}
              </select>
            </label>
            <label>
              as{" "}
              <select value={chosenKind} data-testid="chart-kind" onChange={(e) => setKind(e.target.value as ChartKind)}>
                {CHART_KINDS.filter((k) => (local ? LOCAL_KINDS.has(k.kind) : k.kind !== "map" || facet === "country")).map((k) => (
                  <option key={k.kind} value={k.kind}>{k.label}</option>
                ))}
              </select>
            </label>
            {chosenKind === "stacked_bar" && (
              <label>
                split by{" "}
                <select value={stackBy} data-testid="chart-stack-by" onChange={(e) => setStackBy(e.target.value)}>
                  {searched.filter((f) => f.facet !== facet).map((f) => <option key={f.facet} value={f.facet}>{f.label}</option>)}
                </select>
              </label>
            )}
            <button type="button" data-testid="chart-add" onClick={addChart}>Add chart</button>
          </div>
          <div className="charts-grid">
            {state.charts.map((spec) => (
              <ChartView key={spec.id} scope={scope} spec={spec} onSelect={select} onRemove={() => state.remove(spec.id)} />
            ))}
          </div>
        </>
      )}
    </section>
  );
}
