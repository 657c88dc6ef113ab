/**
 * AI column state as a pure reducer: the columns, their filters, and each column's run over the
 * loaded rows (POST /api/ai-columns/evaluate), folded from the run's SSE events. A run has an id;
 * events from a run that was replaced (the rows changed, a retry) are dropped, so an aborted run
 * that still delivers a late event cannot overwrite the new one.
 */
import type { AIColumnEvent, AIColumnType } from "../../api/types";

export type { AIColumnType };

/** Boolean columns filter to one verdict (a qualified Yes/No is its own: "conditional", "needs_review"); text
 * columns to rows with an answer. */
export type AIFilter = "yes" | "no" | "conditional" | "needs_review" | "unknown" | "answered";
export const AI_FILTERS: ReadonlyArray<AIFilter> = ["yes", "no", "conditional", "needs_review", "unknown", "answered"];

/** Where the server found a quote in the record (null: not in it). */
export type EvidenceSection = NonNullable<Extract<AIColumnEvent, { type: "row" }>["sections"]>[number];
export type AIQualifier = "conditional" | "needs_review";

export type AICellState =
  | { status: "pending" }
  | {
      status: "done";
      value: string | null;
      display: string;
      reasoning: string;
      evidence: string[];
      /** sections[i]: where evidence[i] sits in the record */
      sections: EvidenceSection[];
      qualifier: AIQualifier | null;
      cached: boolean;
      model: string;
      parseError: string | null;
    }
  | { status: "error"; message: string; retryable: boolean };

export interface AIRunError {
  message: string;
  code: string;
  retryable: boolean;
}

export interface AIColumnRun {
  runId: number;
  /** idle: nothing to evaluate (no rows); failed: the run could not start or stopped (see `error`). */
  status: "idle" | "running" | "complete" | "failed";
  /** The row ids this run evaluates, in table order. */
  ids: string[];
  done: number;
  total: number;
  /** Rows never sent (not a valid id): counted as done, since the server's progress leaves them out. */
  skipped: number;
  cells: Record<string, AICellState>;
  error: AIRunError | null;
  model: string | null;
}

export interface AIColumn {
  id: string;
  name: string;
  criteria: string;
  type: AIColumnType;
  filter: AIFilter | null;
  run: AIColumnRun;
}

export type AIColumnAction =
  | { type: "add"; column: Pick<AIColumn, "id" | "name" | "criteria" | "type"> }
  | { type: "remove"; id: string }
  | { type: "filter"; id: string; filter: AIFilter | null }
  /** A new run over `ids` (none: idle). `rejected` rows are not sent (not a valid id): they start as errors. */
  | { type: "start"; id: string; runId: number; ids: string[]; rejected?: Record<string, string> }
  | { type: "event"; id: string; runId: number; event: AIColumnEvent }
  /** The run's request failed or its stream ended early. */
  | { type: "failed"; id: string; runId: number; error: AIRunError }
  /** Re-run one row (after a retryable row_error) inside the current run. */
  | { type: "retry_row"; id: string; runId: number; rowId: string }
  | { type: "row_failed"; id: string; runId: number; rowId: string; error: AIRunError };

export const idleRun: AIColumnRun = { runId: 0, status: "idle", ids: [], done: 0, total: 0, skipped: 0, cells: {}, error: null, model: null };

function cellOf(event: Extract<AIColumnEvent, { type: "row" | "row_error" }>): AICellState {
  if (event.type === "row_error") {
    return { status: "error", message: String(event.message ?? "This row could not be evaluated."), retryable: Boolean(event.retryable) };
  }
  return {
    status: "done",
    value: typeof event.value === "string" ? event.value : null,
    display: typeof event.display === "string" && event.display ? event.display : "Unknown",
    reasoning: typeof event.reasoning === "string" ? event.reasoning : "",
    evidence: Array.isArray(event.evidence) ? event.evidence.map(String) : [],
    sections: Array.isArray(event.sections) ? event.sections : [],
    qualifier: event.qualifier === "conditional" || event.qualifier === "needs_review" ? event.qualifier : null,
    cached: Boolean(event.cached),
    model: typeof event.model === "string" ? event.model : "",
    parseError: typeof event.parse_error === "string" ? event.parse_error : null,
  };
}

function withCell(run: AIColumnRun, rowId: string, cell: AICellState): AIColumnRun {
  if (!(rowId in run.cells)) return run; // not a row of this run
  return { ...run, cells: { ...run.cells, [rowId]: cell } };
}

function foldEvent(run: AIColumnRun, event: AIColumnEvent): AIColumnRun {
  switch (event.type) {
    case "progress":
      return { ...run, done: (Number(event.done) || 0) + run.skipped, total: (Number(event.total) || 0) + run.skipped || run.total };
    case "row":
    case "row_error":
      return withCell(run, event.id, cellOf(event));
    case "complete": {
      // Every row should have answered by now; one that did not is an error the user can retry.
      const cells = { ...run.cells };
      for (const id of run.ids) {
        if (cells[id]?.status === "pending") cells[id] = { status: "error", message: "No result came back for this row.", retryable: true };
      }
      const total = (Number(event.total) || 0) + run.skipped || run.total;
      const done = (Number(event.done) || 0) + run.skipped;
      return { ...run, cells, status: "complete", done, total, model: event.model ?? null };
    }
    case "error":
      return {
        ...run,
        status: "failed",
        error: { message: String(event.message ?? "The column could not be evaluated."), code: String(event.code ?? "error"), retryable: Boolean(event.retryable) },
      };
    default:
      return run;
  }
}

export function aiColumnsReducer(columns: AIColumn[], action: AIColumnAction): AIColumn[] {
  if (action.type === "add") return [...columns, { ...action.column, filter: null, run: idleRun }];
  if (action.type === "remove") return columns.filter((c) => c.id !== action.id);
  return columns.map((c) => {
    if (c.id !== action.id) return c;
    switch (action.type) {
      case "filter":
        return { ...c, filter: action.filter };
      case "start": {
        const cells: Record<string, AICellState> = {};
        for (const id of action.ids) {
          const reason = action.rejected?.[id];
          cells[id] = reason ? { status: "error", message: reason, retryable: false } : { status: "pending" };
        }
        const rejected = Object.keys(action.rejected ?? {}).filter((id) => id in cells).length;
        const status = action.ids.length === 0 ? "idle" : rejected === action.ids.length ? "complete" : "running";
        return {
          ...c,
          run: { runId: action.runId, status, ids: action.ids, done: rejected, total: action.ids.length, skipped: rejected, cells, error: null, model: null },
        };
      }
      default:
        break;
    }
    if (action.runId !== c.run.runId) return c; // a replaced run: its late events do not count
    switch (action.type) {
      case "event":
        return { ...c, run: foldEvent(c.run, action.event) };
      case "failed":
        return c.run.status === "running" ? { ...c, run: { ...c.run, status: "failed", error: action.error } } : c;
      case "retry_row":
        return { ...c, run: withCell(c.run, action.rowId, { status: "pending" }) };
      case "row_failed":
        return { ...c, run: withCell(c.run, action.rowId, { status: "error", message: action.error.message, retryable: action.error.retryable }) };
    }
  });
}

// ---- reading the state ---------------------------------------------------------------------------

/** A finished cell's bucket: yes / no / unknown for boolean columns, answered / unknown for text. */
export function cellCategory(type: AIColumnType, cell: AICellState | undefined): AIFilter | "error" | "pending" {
  if (!cell || cell.status === "pending") return "pending";
  if (cell.status === "error") return "error";
  if (type === "text") return cell.value != null && cell.value !== "" ? "answered" : "unknown";
  if (cell.qualifier) return cell.qualifier; // a conditional Yes is not a Yes a "Yes only" filter should keep
  return cell.value === "MET" ? "yes" : cell.value === "NOT_MET" ? "no" : "unknown";
}

export type AIColumnCounts = Record<string, number>;

/** Counts over the run's rows: {yes, no, conditional, needs_review, unknown, error, pending} (text: {answered, unknown, error, pending}). */
export function columnCounts(column: AIColumn): AIColumnCounts {
  const counts: AIColumnCounts =
    column.type === "boolean"
      ? { yes: 0, no: 0, conditional: 0, needs_review: 0, unknown: 0, error: 0, pending: 0 } : { answered: 0, unknown: 0, error: 0, pending: 0 };
  for (const id of column.run.ids) {
    const category = cellCategory(column.type, column.run.cells[id]);
    counts[category] = (counts[category] ?? 0) + 1;
  }
  return counts;
}

/** Does this row pass the column's filter? No filter: every row does; otherwise only finished, matching rows. */
export function matchesFilter(column: AIColumn, rowId: string): boolean {
  if (!column.filter) return true;
  return cellCategory(column.type, column.run.cells[rowId]) === column.filter;
}

/** The rows every active filter keeps. */
export function applyAIFilters<T>(rows: T[], columns: AIColumn[], idOf: (row: T) => string): T[] {
  const active = columns.filter((c) => c.filter);
  if (active.length === 0) return rows;
  return rows.filter((row) => active.every((c) => matchesFilter(c, idOf(row))));
}

/** A text column's answer as the assistant reads it: enough to quote, not a whole abstract. */
const VERDICT_CHARS = 160;

/** Each finished row's verdict, in table order: yes / no / unknown for boolean columns, the answer for text
 * columns. The assistant reads them per row ("which trials scored Yes?"), within the page context budget. */
function columnVerdicts(column: AIColumn): Record<string, string> {
  const verdicts: Record<string, string> = {};
  for (const id of column.run.ids) {
    const cell = column.run.cells[id];
    if (cell?.status !== "done") continue;
    verdicts[id] = column.type === "boolean" ? cellCategory(column.type, cell) : (cell.display ?? "").slice(0, VERDICT_CHARS);
  }
  return verdicts;
}

/** The context shape both specs use for AI columns, plus each row's verdict. `filter_active` stays for older
 * readers. */
export function aiColumnsContext(columns: AIColumn[]) {
  return columns.map((c) => ({
    name: c.name,
    type: c.type,
    criteria: c.criteria,
    filter_active: c.filter !== null,
    filter: c.filter,
    counts: columnCounts(c),
    verdicts: columnVerdicts(c),
  }));
}
