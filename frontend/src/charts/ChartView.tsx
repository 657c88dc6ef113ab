/**
 * One chart: the drawing (ECharts on a canvas, loaded on first use) and, for everyone who does not
 * read canvases, the same figures as a table whose rows filter like a click on the bar does.
 */
import { useEffect, useRef, useState } from "react";
import { buildOption, chartRows, type ChartData, type ClickTarget } from "./chartOption";
import { chartTitle, type ChartSpec, valueLabel } from "./chartSpec";
import type { StatsScope } from "./statsScope";
import { chartTheme } from "./theme";
import { useChartData } from "./useChartData";

export interface ChartSelection {
  facet: string;
  value: string;
  stack?: { facet: string; value: string };
}

interface Props {
  scope: StatsScope | null;
  spec: ChartSpec;
  onSelect?: (selection: ChartSelection) => void;
  onRemove?: () => void;
  /** Inline in the conversation: smaller, no remove button. */
  compact?: boolean;
}

type Chart = { setOption: (o: unknown, notMerge?: boolean) => void; dispose: () => void; resize: () => void;
  on: (event: string, handler: (params: { data?: unknown }) => void) => void };

function Drawing({ spec, data, title, onSelect, compact }: { spec: ChartSpec; data: ChartData; title: string;
  onSelect?: (s: ChartSelection) => void; compact?: boolean }) {
  const ref = useRef<HTMLDivElement>(null);
  const chart = useRef<Chart | null>(null);
  const onSelectRef = useRef(onSelect);
  onSelectRef.current = onSelect;
  const [failed, setFailed] = useState<string | null>(null);

  useEffect(() => {
    let disposed = false;
    let themeWatch: MutationObserver | null = null;
    let scheme: MediaQueryList | null = null;
    let redraw: (() => void) | null = null;
    const resize = () => chart.current?.resize();
    (async () => {
      const { echarts } = await import("./echartsSetup");
      if (spec.kind === "map") (await import("./worldMap")).registerWorld(echarts);
      if (disposed || !ref.current) return;
      const instance = echarts.init(ref.current, null, { renderer: "canvas" }) as unknown as Chart;
      chart.current = instance;
      instance.on("click", (params) => {
        const target = (params.data ?? {}) as ClickTarget;
        if (!target.raw) return;
        onSelectRef.current?.({ facet: spec.facet, value: target.raw,
          ...(target.stackFacet && target.stackValue ? { stack: { facet: target.stackFacet, value: target.stackValue } } : {}) });
      });
      const draw = () => instance.setOption(buildOption(spec.kind, data, chartTheme(), title), true);
      draw();
      ref.current.dataset.ready = "true";
      window.addEventListener("resize", resize);
      // A theme switch (a class or data attribute on <html>, or the system's colour scheme) redraws in its colours.
      themeWatch = new MutationObserver(draw);
      themeWatch.observe(document.documentElement, { attributes: true, attributeFilter: ["class", "data-theme", "style"] });
      scheme = window.matchMedia?.("(prefers-color-scheme: dark)") ?? null;
      scheme?.addEventListener("change", draw);
      redraw = draw;
    })().catch((err: unknown) => setFailed(err instanceof Error ? err.message : String(err)));
    return () => {
      disposed = true;
      window.removeEventListener("resize", resize);
      themeWatch?.disconnect();
      if (redraw) scheme?.removeEventListener("change", redraw);
      chart.current?.dispose();
      chart.current = null;
    };
  }, [spec, data, title]);

  if (failed) return <p className="error-text" role="alert">The chart could not be drawn: {failed}</p>;
  return <div ref={ref} className={`chart-canvas chart-${spec.kind}`} data-testid="chart-canvas"
              role="img" aria-label={`${title} (the table view lists the same figures)`}
              style={{ height: compact ? 220 : spec.kind === "map" ? 320 : 280 }} />;
}

function TableView({ spec, data, onSelect }: { spec: ChartSpec; data: ChartData; onSelect?: (s: ChartSelection) => void }) {
  const rows = chartRows(data.stats);
  const stacks = data.stacks ?? [];
  return (
    <table className="chart-table" data-testid="chart-table">
      <thead>
        <tr>
          <th scope="col">{data.stats.label}</th>
          {stacks.length ? stacks.map((s) => <th key={s.value} scope="col">{valueLabel(s.facet, s.value)}</th>)
            : <th scope="col">Count</th>}
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.value}>
            <th scope="row">
              {onSelect ? (
                <button type="button" className="link-button" data-testid="chart-table-filter"
                        title={`Filter the table to ${r.label}`} onClick={() => onSelect({ facet: spec.facet, value: r.value })}>
                  {r.label}
                </button>
              ) : r.label}
            </th>
            {stacks.length ? stacks.map((s) => (
              <td key={s.value}>{(s.stats.buckets.find((b) => b.value === r.value)?.count ?? 0).toLocaleString("en-US")}</td>
            )) : <td>{r.count.toLocaleString("en-US")}</td>}
          </tr>
        ))}
        {(data.stats.other ?? 0) > 0 && (
          <tr>
            <th scope="row">Other values ({(data.stats.distinct - rows.length).toLocaleString("en-US")})</th>
            <td colSpan={Math.max(1, stacks.length)}>{(data.stats.other ?? 0).toLocaleString("en-US")}</td>
          </tr>
        )}
      </tbody>
    </table>
  );
}

function footnote(data: ChartData): string {
  const s = data.stats;
  const parts = [`Over ${s.basis.toLocaleString("en-US")} ${s.sampled ? "sampled " : ""}records`];
  if (s.missing > 0) parts.push(`${s.missing.toLocaleString("en-US")} with no ${s.label.toLowerCase()}`);
  if (s.multi_valued) parts.push("a record can count under several values");
  if (s.note) parts.push(s.note);
  return parts.join(" · ");
}

export function ChartView({ scope, spec, onSelect, onRemove, compact }: Props) {
  const app = scope?.app ?? "trialscout";
  const title = chartTitle(app, spec);
  const { data, response, error, loading } = useChartData(scope, spec);
  const [showTable, setShowTable] = useState(false);

  return (
    <figure className={`chart${compact ? " chart-compact" : ""}`} data-testid="chart" data-facet={spec.facet} data-kind={spec.kind}>
      <figcaption className="chart-header">
        {/* In a card the card's title names the chart already. */}
        <span className={compact ? "chart-title sr-only" : "chart-title"}>{title}</span>
        <span className="chart-tools">
          <button type="button" className="link-button" aria-pressed={showTable} data-testid="chart-table-toggle"
                  onClick={() => setShowTable((v) => !v)}>
            {showTable ? "Show chart" : "Table view"}
          </button>
          {onRemove && (
            <button type="button" className="link-button" aria-label={`Remove chart ${title}`} onClick={onRemove}>
              Remove
            </button>
          )}
        </span>
      </figcaption>
      {!scope?.search && <p className="muted small">Run a search to chart its results.</p>}
      {error && <p className="error-text" role="alert">{error}</p>}
      {loading && !data && <p className="muted small" aria-live="polite">Counting…</p>}
      {data && (data.stats.buckets.length === 0
        ? <p className="muted small">No {data.stats.label.toLowerCase()} recorded for these results.</p>
        : showTable ? <TableView spec={spec} data={data} onSelect={onSelect} />
          : <Drawing spec={spec} data={data} title={title} onSelect={onSelect} compact={compact} />)}
      {data && (
        <p className="chart-footnote muted small" data-testid="chart-footnote">
          {footnote(data)}
          {response?.sampled && response.note ? ` · ${response.note}` : ""}
        </p>
      )}
    </figure>
  );
}
