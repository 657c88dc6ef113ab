/**
 * Usage (admins): tokens and estimated cost per user, per day and per model over a chosen period, from
 * what every saved turn recorded; a chart of each day by model, the tables, and a CSV export.
 */
import { useEffect, useRef, useState, type FormEvent } from "react";
import { api } from "../../api/client";
import type { UsageGroup, UsageReport } from "../../api/types";
import { chartTheme } from "../../charts/theme";
import { formatUsd, tokensOf, usageOption, usageSeries, type UsageMetric } from "./usageChart";

const DAY = 86_400_000;
const isoDay = (t: number) => new Date(t).toISOString().slice(0, 10);

type Chart = { setOption: (o: unknown, notMerge?: boolean) => void; dispose: () => void; resize: () => void };

function UsageChart({ report, metric }: { report: UsageReport; metric: UsageMetric }) {
  const ref = useRef<HTMLDivElement>(null);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    let chart: Chart | null = null;
    let disposed = false;
    const resize = () => chart?.resize();
    (async () => {
      const { echarts } = await import("../../charts/echartsSetup");
      if (disposed || !ref.current) return;
      chart = echarts.init(ref.current, null, { renderer: "canvas" }) as unknown as Chart;
      chart.setOption(usageOption(usageSeries(report, metric), metric, chartTheme()), true);
      ref.current.dataset.ready = "true";
      window.addEventListener("resize", resize);
    })().catch((err: unknown) => setFailed(err instanceof Error ? err.message : String(err)));
    const canvas = ref.current;
    return () => {
      disposed = true;
      if (canvas) delete canvas.dataset.ready;
      window.removeEventListener("resize", resize);
      chart?.dispose();
    };
  }, [report, metric]);
  if (failed) return <p className="error-text" role="alert">The chart could not be drawn: {failed}</p>;
  return <div ref={ref} className="chart-canvas" data-testid="usage-chart" role="img" style={{ height: 300 }}
              aria-label={`${metric === "cost" ? "Estimated cost" : "Tokens"} per day by model (the tables list the same figures)`} />;
}

function GroupTable({ title, groups, testId }: { title: string; groups: UsageGroup[]; testId: string }) {
  return (
    <table className="chart-table" data-testid={testId}>
      <caption className="chart-title">{title}</caption>
      <thead>
        <tr>
          <th scope="col">{title.replace(/^Per /, "").replace(/^./, (c) => c.toUpperCase())}</th>
          <th scope="col">Turns</th>
          <th scope="col">Input</th>
          <th scope="col">Output</th>
          <th scope="col">Cache read</th>
          <th scope="col">Cache write</th>
          <th scope="col">Estimated cost</th>
        </tr>
      </thead>
      <tbody>
        {groups.map((g) => (
          <tr key={g.key}>
            <th scope="row">{g.key}</th>
            <td>{g.turns.toLocaleString("en-US")}</td>
            <td>{g.input_tokens.toLocaleString("en-US")}</td>
            <td>{g.output_tokens.toLocaleString("en-US")}</td>
            <td>{g.cache_read_input_tokens.toLocaleString("en-US")}</td>
            <td>{g.cache_creation_input_tokens.toLocaleString("en-US")}</td>
            <td>{formatUsd(g.cost_usd)}</td>
          </tr>
        ))}
        {groups.length === 0 && (
          <tr>
            <td colSpan={7} className="muted">No usage in this period.</td>
          </tr>
        )}
      </tbody>
    </table>
  );
}

export function UsageAdmin() {
  const today = isoDay(Date.now());
  const [period, setPeriod] = useState({ start: isoDay(Date.now() - 29 * DAY), end: today });
  const [draft, setDraft] = useState(period);
  const [metric, setMetric] = useState<UsageMetric>("cost");
  const [report, setReport] = useState<UsageReport | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const controller = new AbortController();
    setError(null);
    api.usage(period.start, period.end, controller.signal).then(setReport).catch((err: unknown) => {
      if (err instanceof DOMException && err.name === "AbortError") return;
      setError(err instanceof Error ? err.message : String(err));
    });
    return () => controller.abort();
  }, [period]);

  const apply = (e: FormEvent) => {
    e.preventDefault();
    setPeriod(draft);
  };

  return (
    <main className="page-main" id="main">
      <div className="page-content" data-testid="usage-page">
        <h1 className="page-title">Usage</h1>
        <p className="muted">Tokens and estimated cost (list prices, USD) of every saved chat turn, per UTC day.</p>
        <form className="charts-add" onSubmit={apply} aria-label="Period">
          <label>
            From <input type="date" value={draft.start} max={draft.end} required data-testid="usage-start"
                        onChange={(e) => setDraft({ ...draft, start: e.target.value })} />
          </label>
          <label>
            to <input type="date" value={draft.end} min={draft.start} required data-testid="usage-end"
                      onChange={(e) => setDraft({ ...draft, end: e.target.value })} />
          </label>
          <button type="submit" data-testid="usage-apply">Show</button>
          <a href={api.usageCsvUrl(period.start, period.end)} download data-testid="usage-csv">Export CSV</a>
        </form>
        {error && <p className="error-text" role="alert">{error}</p>}
        {!report && !error && <p className="loading">Loading…</p>}
        {report && (
          <>
            <p className="results-summary" data-testid="usage-total">
              {report.start} to {report.end}: {report.total.turns.toLocaleString("en-US")} turn{report.total.turns === 1 ? "" : "s"},{" "}
              {tokensOf(report.total).toLocaleString("en-US")} tokens, {formatUsd(report.total.cost_usd)} estimated
            </p>
            <figure className="chart">
              <figcaption className="chart-header">
                <span className="chart-title">Per day, by model</span>
                <span className="chart-tools">
                  <label>
                    Show{" "}
                    <select value={metric} data-testid="usage-metric" onChange={(e) => setMetric(e.target.value as UsageMetric)}>
                      <option value="cost">estimated cost</option>
                      <option value="tokens">tokens</option>
                    </select>
                  </label>
                </span>
              </figcaption>
              <UsageChart report={report} metric={metric} />
            </figure>
            <div className="table-wrap">
              <GroupTable title="Per user" groups={report.by_user} testId="usage-by-user" />
            </div>
            <div className="table-wrap">
              <GroupTable title="Per model" groups={report.by_model} testId="usage-by-model" />
            </div>
            <div className="table-wrap">
              <GroupTable title="Per day" groups={report.by_day.filter((d) => d.turns > 0)} testId="usage-by-day" />
            </div>
          </>
        )}
      </div>
    </main>
  );
}
