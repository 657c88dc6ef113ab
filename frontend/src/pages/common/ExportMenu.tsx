/**
 * Export on Tablizer and TrialScout: the table as shown (its columns, its rows in their filtered and
 * sorted order, each AI column as verdict, reasoning and evidence) as CSV or XLSX, and a report of the
 * selected rows (HTML and PDF, built on the server with progress). The server fills the AI columns from
 * the user's own stored results, so the file says what the table said.
 */
import { useEffect, useRef, useState } from "react";
import { exportTable, saveFile, streamReport } from "../../api/client";
import type { ReportChart, ReportInfo, TableExportRequest } from "../../api/types";
import { useDismissable } from "../../useDismissable";
import type { AIColumns } from "./aiColumns";
import { describeSelection, reportTitle, type Facet } from "./selectionReport";

type App = TableExportRequest["app"];
type Cell = string | number | string[] | null;

/** A column as text, for files: what the table cell shows, without markup. */
export interface ExportColumn<Row> {
  key: string;
  label: string;
  text: (row: Row) => Cell;
}

const ID_KEY: Record<App, string> = { tablizer: "pmid", trialscout: "nct_id" };

interface Props<Row> {
  app: App;
  rows: readonly Row[];
  rowId: (row: Row) => string;
  columns: ReadonlyArray<ExportColumn<Row>>;
  ai: AIColumns;
  selected: ReadonlySet<string>;
  /** What the page searched, as the report's subtitle and default title. */
  query: string;
  /** The charts panel's charts as figures (fetched when a report is built) — used only without `facets`. */
  charts?: () => Promise<ReportChart[]>;
  /** What a report counts over the selected rows (its summary and charts), and what one row is called. */
  facets?: ReadonlyArray<Facet<Row>>;
  /** The facets of the charts pinned on the page: the report redraws those over the selected rows. */
  pinned?: readonly string[];
  one?: string;
}

function tableOf<Row>(app: App, rows: readonly Row[], rowId: (row: Row) => string, columns: ReadonlyArray<ExportColumn<Row>>, ai: AIColumns): TableExportRequest {
  const idKey = ID_KEY[app];
  const shown = columns.some((c) => c.key === idKey) ? columns : [{ key: idKey, label: idKey === "pmid" ? "PMID" : "NCT ID", text: rowId }, ...columns];
  return {
    app,
    columns: shown.map(({ key, label }) => ({ key, label })),
    rows: rows.map((row) => Object.fromEntries([[idKey, rowId(row)], ...shown.map((c) => [c.key, c.text(row)])])),
    ai_columns: ai.columns.map(({ name, criteria, type }) => ({ name, criteria, type })),
  };
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

export function ExportMenu<Row>({ app, rows, rowId, columns, ai, selected, query, charts, facets, pinned, one = "row" }: Props<Row>) {
  const [busy, setBusy] = useState<"csv" | "xlsx" | "report" | null>(null);
  const [status, setStatus] = useState("");
  const [report, setReport] = useState<ReportInfo | null>(null);
  const [title, setTitle] = useState("");
  const abortRef = useRef<AbortController | null>(null);
  const menuRef = useRef<HTMLDetailsElement>(null);
  useDismissable(menuRef);
  useEffect(() => () => abortRef.current?.abort(), []);

  const shortlist = rows.filter((row) => selected.has(rowId(row)));
  const defaultTitle = reportTitle(shortlist.length, one, query);

  const download = async (format: "csv" | "xlsx") => {
    setBusy(format);
    setStatus("");
    try {
      saveFile(await exportTable(tableOf(app, rows, rowId, columns, ai), format));
      setStatus(`Downloaded ${rows.length} ${rows.length === 1 ? "row" : "rows"} as ${format.toUpperCase()}.`);
    } catch (err) {
      setStatus(`Export failed: ${message(err)}`);
    } finally {
      setBusy(null);
    }
  };

  const build = async () => {
    abortRef.current?.abort();
    const controller = new AbortController();
    abortRef.current = controller;
    setBusy("report");
    setReport(null);
    setStatus("Building the report…");
    try {
      // The report is about the selected rows: its summary and charts are computed from them (never the last
      // chat answer, never the whole search's counts).
      const own = facets ? describeSelection(shortlist, rowId, one, facets, ai.columns, pinned) : null;
      const figures = own ? own.charts : charts ? await charts() : [];
      const body = { ...tableOf(app, shortlist, rowId, columns, ai), title: title.trim() || defaultTitle, query: query.trim() || null, charts: figures,
                     ...(own ? { summary: own.summary, include_answer: false } : {}) };
      await streamReport(
        body,
        (event) => {
          if (event.type === "report_progress") setStatus(`${event.step}… (${event.done}/${event.total})`);
          else if (event.type === "report_ready") {
            setReport(event.report);
            setStatus(`Report ready: ${event.report.row_count} ${event.report.row_count === 1 ? "row" : "rows"}.`);
          } else setStatus(`The report could not be built: ${event.message}`);
        },
        controller.signal,
      );
    } catch (err) {
      if (!controller.signal.aborted) setStatus(`The report could not be built: ${message(err)}`);
    } finally {
      if (abortRef.current === controller) abortRef.current = null;
      setBusy(null);
    }
  };

  return (
    <details className="export-menu" data-testid="export-menu" ref={menuRef}>
      <summary>Export</summary>
      <div className="export-panel">
        <div className="export-row">
          <button type="button" data-testid="export-csv" disabled={busy !== null || rows.length === 0} onClick={() => void download("csv")}>
            CSV
          </button>
          <button type="button" data-testid="export-xlsx" disabled={busy !== null || rows.length === 0} onClick={() => void download("xlsx")}>
            Excel (.xlsx)
          </button>
          <span className="muted small">
            {rows.length} {rows.length === 1 ? "row" : "rows"} as shown{ai.columns.length ? `, with ${ai.columns.length} AI ${ai.columns.length === 1 ? "column" : "columns"}` : ""}
          </span>
        </div>
        <div className="export-row">
          <label className="small">
            Report title{" "}
            <input data-testid="report-title" value={title} placeholder={defaultTitle} maxLength={200} onChange={(e) => setTitle(e.target.value)} />
          </label>
          <button type="button" data-testid="build-report" disabled={busy !== null || shortlist.length === 0} onClick={() => void build()}>
            {shortlist.length ? `Report on ${shortlist.length} selected` : "Select rows for a report"}
          </button>
        </div>
        <p className="small" role="status" data-testid="export-status">
          {status}
        </p>
        {report && (
          <p className="export-row small">
            <a href={report.html_url} target="_blank" rel="noopener" data-testid="report-html">
              Open the report
            </a>
            <a href={`${report.pdf_url}?download=true`} data-testid="report-pdf">
              Download PDF
            </a>
          </p>
        )}
      </div>
    </details>
  );
}
