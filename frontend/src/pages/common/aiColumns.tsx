/**
 * AI columns, shared by Tablizer and TrialScout: a criteria prompt evaluated per loaded row (Yes/No or
 * Text) by POST /api/ai-columns/evaluate. Cells fill in as the run's `row` events arrive; a new set of
 * loaded rows aborts the run and starts another (the server's cache makes rows it has seen instant).
 * The pure state lives in `aiColumnState.ts`; this file runs the requests and draws the parts.
 */
import { useCallback, useEffect, useLayoutEffect, useReducer, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import { ApiError, streamAIColumn } from "../../api/client";
import type { AIColumnRequest } from "../../api/types";
import {
  aiColumnsReducer,
  columnCounts,
  type AICellState,
  type AIColumn,
  type AIColumnType,
  type AIFilter,
  type AIRunError,
} from "./aiColumnState";

export { aiColumnsContext, applyAIFilters } from "./aiColumnState";
export type { AIColumn, AIColumnType, AIFilter } from "./aiColumnState";

type AIApp = AIColumnRequest["app"];
type Row = Record<string, unknown>;

/** The server evaluates at most this many rows per run. */
export const MAX_AI_ROWS = 500;

const ID_KEY: Record<AIApp, string> = { trialscout: "nct_id", tablizer: "pmid" };

/** The id as the server normalizes it ("nct123" → "NCT00000123"), or null when it is not one. */
export function normalizeRowId(app: AIApp, id: string): string | null {
  if (app === "trialscout") {
    const m = /^\s*NCT0*([1-9]\d{0,7})\s*$/i.exec(id);
    return m ? `NCT${m[1].padStart(8, "0")}` : null;
  }
  const m = /^\s*([1-9]\d{0,9})\s*$/.exec(id);
  return m ? m[1] : null;
}

const SUMMARY_KEYS: Record<AIApp, string[]> = {
  trialscout: ["title", "phase", "status", "study_type", "conditions", "interventions", "sponsor", "enrollment"],
  tablizer: ["title", "journal", "year", "abstract"],
};

/** A row's summary for `items`: the server reads it only when the source has no record for the row. */
function rowSummary(app: AIApp, row: Row, id: string): Row {
  const item: Row = { [ID_KEY[app]]: id };
  for (const key of SUMMARY_KEYS[app]) {
    const value = row[key];
    if (value == null || value === "") continue;
    item[key] = typeof value === "string" ? value.slice(0, 4000) : value;
  }
  return item;
}

function runError(err: unknown): AIRunError {
  if (err instanceof ApiError) return { message: err.message, code: err.code, retryable: err.retryable };
  return { message: err instanceof Error ? err.message : String(err), code: "error", retryable: true };
}

/** One column's run in flight: its abort handles and the way back from server ids to row ids. */
interface Running {
  key: string;
  runId: number;
  controllers: Set<AbortController>;
  /** normalized id → row id */
  rows: Map<string, string>;
  items: Map<string, Row>;
}

function abortAll(running: Running | undefined) {
  running?.controllers.forEach((c) => c.abort());
  running?.controllers.clear();
}

/**
 * The page's AI columns, evaluated over `rows` (the loaded rows: a results page, a snapshot, a
 * comparison group). Changing which rows are loaded aborts every run and starts new ones.
 */
export function useAIColumns(app: AIApp, rows: readonly Row[]) {
  const [columns, dispatch] = useReducer(aiColumnsReducer, []);
  const nextColumn = useRef(1);
  const nextRun = useRef(1);
  const runs = useRef(new Map<string, Running>());
  const rowsRef = useRef(rows);
  rowsRef.current = rows;
  const columnsRef = useRef(columns);
  columnsRef.current = columns;
  const rowsKey = rows.map((r) => String(r[ID_KEY[app]] ?? "")).join("\n");

  const start = useCallback(
    (column: AIColumn, key: string) => {
      abortAll(runs.current.get(column.id));
      const runId = nextRun.current++;
      const running: Running = { key, runId, controllers: new Set(), rows: new Map(), items: new Map() };
      runs.current.set(column.id, running);
      const ids: string[] = [];
      const seen = new Set<string>();
      const rejected: Record<string, string> = {};
      for (const row of rowsRef.current) {
        const id = String(row[ID_KEY[app]] ?? "");
        if (seen.has(id)) continue;
        seen.add(id);
        ids.push(id);
        const normalized = normalizeRowId(app, id);
        if (!normalized || running.rows.has(normalized)) {
          rejected[id] = `${id || "This row"} is not a valid ${app === "trialscout" ? "NCT id" : "PMID"}.`;
        } else if (running.rows.size >= MAX_AI_ROWS) {
          rejected[id] = `Only the first ${MAX_AI_ROWS} rows are evaluated.`;
        } else {
          running.rows.set(normalized, id);
          running.items.set(normalized, rowSummary(app, row, normalized));
        }
      }
      dispatch({ type: "start", id: column.id, runId, ids, rejected });
      if (running.rows.size === 0) return;

      const controller = new AbortController();
      running.controllers.add(controller);
      const fail = (error: AIRunError) => dispatch({ type: "failed", id: column.id, runId, error });
      let ended = false;
      void streamAIColumn(
        {
          column: { name: column.name, criteria: column.criteria, type: column.type },
          app,
          ids: [...running.rows.keys()],
          items: [...running.items.values()],
        },
        (event) => {
          if (controller.signal.aborted) return;
          if (event.type === "complete" || event.type === "error") ended = true;
          const mapped = event.type === "row" || event.type === "row_error" ? { ...event, id: running.rows.get(event.id) ?? event.id } : event;
          dispatch({ type: "event", id: column.id, runId, event: mapped });
        },
        controller.signal,
      )
        .then(() => {
          if (!ended && !controller.signal.aborted) {
            fail({ message: "The connection closed before the column finished.", code: "stream_closed", retryable: true });
          }
        })
        .catch((err: unknown) => {
          if (!controller.signal.aborted) fail(runError(err));
        })
        .finally(() => running.controllers.delete(controller));
    },
    [app],
  );

  // Start a run for every column whose rows changed (or that has none yet); stop the runs of removed columns.
  useEffect(() => {
    for (const column of columns) {
      if (runs.current.get(column.id)?.key !== rowsKey) start(column, rowsKey);
    }
    for (const [id, running] of runs.current) {
      if (!columns.some((c) => c.id === id)) {
        abortAll(running);
        runs.current.delete(id);
      }
    }
  }, [columns, rowsKey, start]);

  useEffect(() => {
    const all = runs.current;
    return () => {
      all.forEach(abortAll);
      all.clear();
    };
  }, []);

  const add = useCallback((name: string, criteria: string, type: AIColumnType) => {
    dispatch({ type: "add", column: { id: `col-${nextColumn.current++}`, name: name.trim(), criteria: criteria.trim(), type } });
  }, []);
  const remove = useCallback((id: string) => dispatch({ type: "remove", id }), []);
  const setFilter = useCallback((id: string, filter: AIFilter | null) => dispatch({ type: "filter", id, filter }), []);

  /** Run the whole column again (after it could not start or stopped). */
  const retry = useCallback(
    (id: string) => {
      const column = columnsRef.current.find((c) => c.id === id);
      if (column) start(column, rowsKey);
    },
    [start, rowsKey],
  );

  /** Evaluate one row again (after a retryable row_error), inside the column's current run. */
  const retryRow = useCallback(
    (id: string, rowId: string) => {
      const column = columnsRef.current.find((c) => c.id === id);
      const running = runs.current.get(id);
      const normalized = running && [...running.rows].find(([, r]) => r === rowId)?.[0];
      if (!column || !running || !normalized) return;
      const { runId } = running;
      const controller = new AbortController();
      running.controllers.add(controller);
      const fail = (error: AIRunError) => dispatch({ type: "row_failed", id, runId, rowId, error });
      let answered = false;
      dispatch({ type: "retry_row", id, runId, rowId });
      void streamAIColumn(
        {
          column: { name: column.name, criteria: column.criteria, type: column.type },
          app,
          ids: [normalized],
          items: running.items.has(normalized) ? [running.items.get(normalized)!] : undefined,
        },
        (event) => {
          if (controller.signal.aborted || answered) return;
          if (event.type === "row" || event.type === "row_error") {
            answered = true;
            dispatch({ type: "event", id, runId, event: { ...event, id: rowId } });
          } else if (event.type === "error") {
            answered = true;
            fail({ message: event.message, code: event.code, retryable: event.retryable });
          }
        },
        controller.signal,
      )
        .then(() => {
          if (!answered && !controller.signal.aborted) fail({ message: "The connection closed before this row finished.", code: "stream_closed", retryable: true });
        })
        .catch((err: unknown) => {
          if (!controller.signal.aborted) fail(runError(err));
        })
        .finally(() => running.controllers.delete(controller));
    },
    [app],
  );

  return { columns, add, remove, setFilter, retry, retryRow };
}

export type AIColumns = ReturnType<typeof useAIColumns>;

/** Coerce a suggestion's data into a column, refusing ones without a name or criteria. */
export function columnFromPayload(data: Record<string, unknown>): { name: string; criteria: string; type: AIColumnType } {
  const name = typeof data.name === "string" ? data.name.trim() : "";
  const criteria = typeof data.criteria === "string" ? data.criteria.trim() : "";
  if (!name || !criteria) throw new Error("This column suggestion has no name or criteria.");
  return { name, criteria, type: data.type === "boolean" ? "boolean" : "text" };
}

// ---- the table parts -------------------------------------------------------------------------------

/** The column header: name, and the run's progress (done/total) with a bar while it runs. */
export function AIColumnHeader({ column }: { column: AIColumn }) {
  const { status, done, total, error } = column.run;
  return (
    <div className="ai-col-header" data-testid="ai-col-header" data-name={column.name}>
      <span className="ai-col-name">{column.name}</span>
      {total > 0 && (
        <span className="ai-progress" data-testid="ai-progress" data-status={status} data-done={done} data-total={total}>
          {status === "running" && (
            <progress max={total} value={done} aria-label={`${column.name}: ${done} of ${total} rows evaluated`} />
          )}
          <span className="small">
            {done}/{total}
          </span>
        </span>
      )}
      {status === "failed" && (
        <span className="error-text small" title={error?.message}>
          ⚠ stopped
        </span>
      )}
    </div>
  );
}

const CATEGORY_CLASS: Record<string, string> = { yes: "ai-yes", no: "ai-no", unknown: "ai-unknown", answered: "ai-answer" };

function categoryOf(type: AIColumnType, cell: Extract<AICellState, { status: "done" }>): string {
  if (type === "text") return cell.value != null && cell.value !== "" ? "answered" : "unknown";
  return cell.value === "MET" ? "yes" : cell.value === "NOT_MET" ? "no" : "unknown";
}

/** One cell: evaluating…, the answer (click for reasoning and evidence), or an error mark with a retry. */
export function AICell({ ai, column, rowId }: { ai: AIColumns; column: AIColumn; rowId: string }) {
  const [open, setOpen] = useState(false);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const cell = column.run.cells[rowId];
  if (!cell || cell.status === "pending") {
    if (column.run.status === "failed") {
      return (
        <span className="ai-cell not-evaluated" data-testid="ai-cell" data-column={column.name} data-state="not-evaluated" title={column.run.error?.message}>
          not evaluated
        </span>
      );
    }
    return (
      <span className="ai-cell ai-pending" data-testid="ai-cell" data-column={column.name} data-state="pending" aria-busy="true">
        evaluating…
      </span>
    );
  }
  const close = (refocus: boolean) => {
    setOpen(false);
    if (refocus) buttonRef.current?.focus();
  };
  const isError = cell.status === "error";
  const category = isError ? "error" : categoryOf(column.type, cell);
  return (
    <span className="ai-cell-wrap">
      <button
        ref={buttonRef}
        type="button"
        className={`ai-cell link-button ${isError ? "ai-error" : CATEGORY_CLASS[category]}`}
        data-testid="ai-cell"
        data-column={column.name}
        data-state={category}
        aria-haspopup="dialog"
        aria-expanded={open}
        title={isError ? cell.message : "Show the reasoning"}
        onClick={() => setOpen((o) => !o)}
      >
        {isError ? "⚠ error" : cell.display}
      </button>
      {isError && cell.retryable && (
        <button
          type="button"
          className="icon-button small-button"
          data-testid="ai-cell-retry"
          aria-label={`Retry ${column.name} for ${rowId}`}
          title="Retry this row"
          onClick={() => ai.retryRow(column.id, rowId)}
        >
          ↻
        </button>
      )}
      {open && buttonRef.current && (
        <AICellDetails
          column={column}
          rowId={rowId}
          cell={cell}
          anchor={buttonRef.current}
          onClose={close}
          onRetry={() => {
            close(false);
            ai.retryRow(column.id, rowId);
          }}
        />
      )}
    </span>
  );
}

const POPOVER_WIDTH = 380;

/** The reasoning and evidence behind one cell (or its error): a non-modal dialog next to the cell. */
function AICellDetails({
  column,
  rowId,
  cell,
  anchor,
  onClose,
  onRetry,
}: {
  column: AIColumn;
  rowId: string;
  cell: Exclude<AICellState, { status: "pending" }>;
  anchor: HTMLElement;
  onClose: (refocus: boolean) => void;
  onRetry: () => void;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const [position, setPosition] = useState<{ top: number; left: number }>({ top: 0, left: 0 });
  const onCloseRef = useRef(onClose);
  onCloseRef.current = onClose;

  useLayoutEffect(() => {
    const place = () => {
      const r = anchor.getBoundingClientRect();
      const height = ref.current?.offsetHeight ?? 0;
      const left = Math.max(8, Math.min(r.left, window.innerWidth - POPOVER_WIDTH - 8));
      const below = r.bottom + 4;
      const top = below + height > window.innerHeight && r.top - height - 4 > 8 ? r.top - height - 4 : below;
      setPosition({ top, left });
    };
    place();
    window.addEventListener("resize", place);
    window.addEventListener("scroll", place, true);
    return () => {
      window.removeEventListener("resize", place);
      window.removeEventListener("scroll", place, true);
    };
  }, [anchor]);

  useEffect(() => {
    ref.current?.focus();
    const outside = (e: MouseEvent) => {
      const target = e.target as Node;
      if (!ref.current?.contains(target) && !anchor.contains(target)) onCloseRef.current(false);
    };
    document.addEventListener("mousedown", outside);
    return () => document.removeEventListener("mousedown", outside);
  }, [anchor]);

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "Escape") {
      e.stopPropagation();
      onClose(true);
    }
  };
  const titleId = `ai-details-${column.id}-${rowId}`;
  return (
    <div
      ref={ref}
      role="dialog"
      aria-labelledby={titleId}
      tabIndex={-1}
      className="ai-popover"
      data-testid="ai-cell-details"
      style={{ top: position.top, left: position.left, width: POPOVER_WIDTH }}
      onKeyDown={onKeyDown}
    >
      <div className="ai-popover-head">
        <strong id={titleId}>
          {column.name} · <span className="mono">{rowId}</span>
        </strong>
        <button type="button" className="icon-button" aria-label="Close" data-testid="ai-cell-details-close" onClick={() => onClose(true)}>
          ×
        </button>
      </div>
      <p className="muted small ai-popover-criteria">{column.criteria}</p>
      {cell.status === "error" ? (
        <>
          <p className="error-text" data-testid="ai-cell-error">
            {cell.message}
          </p>
          {cell.retryable && (
            <button type="button" data-testid="ai-cell-details-retry" onClick={onRetry}>
              Retry this row
            </button>
          )}
        </>
      ) : (
        <>
          <p>
            <span className={CATEGORY_CLASS[categoryOf(column.type, cell)]} data-testid="ai-cell-answer">
              {cell.display}
            </span>
          </p>
          <h4>Reasoning</h4>
          <p data-testid="ai-cell-reasoning">{cell.reasoning || "The model gave no reasoning."}</p>
          {cell.evidence.length > 0 && (
            <>
              <h4>Evidence</h4>
              <ul className="ai-evidence" data-testid="ai-cell-evidence">
                {cell.evidence.map((quote, i) => (
                  <li key={i}>{quote}</li>
                ))}
              </ul>
            </>
          )}
          {cell.parseError && <p className="muted small">The model's reply could not be read: {cell.parseError}</p>}
          <p className="muted small">
            {cell.model}
            {cell.cached ? " · from the cache" : ""}
          </p>
        </>
      )}
    </div>
  );
}

// ---- the bar above the table -----------------------------------------------------------------------

const FILTERS: Record<AIColumnType, Array<[AIFilter | "all", string]>> = {
  boolean: [
    ["all", "All"],
    ["yes", "Yes only"],
    ["no", "No"],
    ["unknown", "Unknown"],
  ],
  text: [
    ["all", "All"],
    ["answered", "Has answer"],
  ],
};

const COUNT_LABELS: Array<[string, string]> = [
  ["yes", "Yes"],
  ["no", "No"],
  ["answered", "Answered"],
  ["unknown", "Unknown"],
  ["error", "Errors"],
  ["pending", "Evaluating"],
];

/** "Yes 4 · No 9 · Unknown 12" (errors and rows still evaluating only when there are some). */
export function countsText(column: AIColumn): string {
  const counts = columnCounts(column);
  return COUNT_LABELS.filter(([key]) => key in counts && (counts[key] > 0 || !["error", "pending"].includes(key)))
    .map(([key, label]) => `${label} ${counts[key]}`)
    .join(" · ");
}

function AddColumnForm({ onAdd, onCancel }: { onAdd: (name: string, criteria: string, type: AIColumnType) => void; onCancel: () => void }) {
  const [name, setName] = useState("");
  const [criteria, setCriteria] = useState("");
  const [type, setType] = useState<AIColumnType>("boolean");
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!name.trim() || !criteria.trim()) return;
    onAdd(name, criteria, type);
  };
  return (
    <form className="add-column-form" onSubmit={submit} data-testid="ai-column-form">
      <label>
        Column name
        <input data-testid="ai-column-name" required value={name} autoFocus onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        Criteria
        <textarea data-testid="ai-column-criteria" required rows={2} value={criteria} onChange={(e) => setCriteria(e.target.value)} />
      </label>
      <label>
        Type
        <select data-testid="ai-column-type" value={type} onChange={(e) => setType(e.target.value as AIColumnType)}>
          <option value="boolean">Yes/No</option>
          <option value="text">Text</option>
        </select>
      </label>
      <div className="row-gap">
        <button type="submit" className="primary" data-testid="ai-column-add-submit">
          Add column
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/**
 * The AI column bar above a results table: each column with its filter, counts and remove; add by hand.
 * `visible`/`loaded` say how many loaded rows the filters keep.
 */
export function AIColumnsBar({ ai, visible, loaded }: { ai: AIColumns; visible?: number; loaded?: number }) {
  const [adding, setAdding] = useState(false);
  const anyFilter = ai.columns.some((c) => c.filter);
  return (
    <section className="ai-columns" aria-label="AI columns" data-testid="ai-columns">
      <span className="label">AI columns</span>
      {ai.columns.length === 0 && <span className="muted small">none</span>}
      {ai.columns.map((c) => (
        <span key={c.id} className="ai-column-chip" data-testid="ai-column-chip" data-name={c.name} title={c.criteria}>
          <strong>{c.name}</strong> <span className="muted small">{c.type === "boolean" ? "Yes/No" : "Text"}</span>
          <select
            className="ai-filter"
            data-testid="ai-column-filter"
            aria-label={`Filter rows by ${c.name}`}
            value={c.filter ?? "all"}
            onChange={(e) => ai.setFilter(c.id, e.target.value === "all" ? null : (e.target.value as AIFilter))}
          >
            {FILTERS[c.type].map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
          {c.run.total > 0 && (
            <span className="muted small" data-testid="ai-column-counts" aria-live="polite">
              {countsText(c)}
            </span>
          )}
          {c.run.status === "failed" && (
            <>
              <span className="error-text small" role="alert" data-testid="ai-column-error">
                {c.run.error?.message ?? "The column could not be evaluated."}
              </span>
              <button type="button" className="small-button" data-testid="ai-column-retry" onClick={() => ai.retry(c.id)}>
                Retry
              </button>
            </>
          )}
          <button type="button" className="icon-button" aria-label={`Remove column ${c.name}`} data-testid="ai-column-remove" onClick={() => ai.remove(c.id)}>
            ×
          </button>
        </span>
      ))}
      {!adding && (
        <button type="button" data-testid="ai-column-add" onClick={() => setAdding(true)}>
          + Add AI column
        </button>
      )}
      {anyFilter && loaded != null && visible != null && (
        <span className="muted small" data-testid="ai-filter-summary">
          Filters show {visible} of {loaded} loaded rows
        </span>
      )}
      {adding && (
        <AddColumnForm
          onAdd={(name, criteria, type) => {
            ai.add(name, criteria, type);
            setAdding(false);
          }}
          onCancel={() => setAdding(false)}
        />
      )}
    </section>
  );
}
