/**
 * AI columns, shared by Tablizer and TrialScout: a criteria prompt evaluated per loaded row (Yes/No or
 * Text) by POST /api/ai-columns/evaluate. Cells fill in as the run's `row` events arrive; a new set of
 * loaded rows aborts the run and starts another (the server's cache makes rows it has seen instant).
 * The pure state lives in `aiColumnState.ts`; this file runs the requests. The parts that draw them:
 * `AIColumnCell.tsx` (header, cell, details popover) and `AIColumnsBar.tsx` (the bar above the table).
 */
import { useCallback, useEffect, useReducer, useRef } from "react";
import { ApiError, streamAIColumn } from "../../api/client";
import type { AIColumnRequest } from "../../api/types";
import { AI_FILTERS, aiColumnsReducer, type AIColumn, type AIColumnType, type AIFilter, type AIRunError } from "./aiColumnState";

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
  /** Add the column an `ai_column_suggestion` card describes (throws when it has no name or criteria), with
   * `filter` on (a Yes/No column): the table keeps only rows with that verdict as they are evaluated. */
  const addSuggestion = useCallback((data: Record<string, unknown>, filter: AIFilter | null = null) => {
    const { name, criteria, type } = columnFromPayload(data);
    const id = `col-${nextColumn.current++}`;
    dispatch({ type: "add", column: { id, name: name.trim(), criteria: criteria.trim(), type } });
    if (filter && type === "boolean") dispatch({ type: "filter", id, filter });
  }, []);
  const remove = useCallback((id: string) => dispatch({ type: "remove", id }), []);
  /** Put a column back as it was saved (a reopened view, an undone removal): its results come from the cache. */
  const restore = useCallback((saved: SavedAIColumn) => {
    const id = `col-${nextColumn.current++}`;
    dispatch({ type: "add", column: { id, name: saved.name, criteria: saved.criteria, type: saved.type } });
    if (saved.filter) dispatch({ type: "filter", id, filter: saved.filter });
  }, []);
  /** Replace every column with the saved ones (opening a view). */
  const replaceAll = useCallback((saved: readonly SavedAIColumn[]) => {
    for (const c of columnsRef.current) dispatch({ type: "remove", id: c.id });
    saved.forEach(restore);
  }, [restore]);
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

  return { columns, add, addSuggestion, remove, restore, replaceAll, setFilter, retry, retryRow };
}

export type AIColumns = ReturnType<typeof useAIColumns>;

/** An AI column as a saved view keeps it: its definition and filter (its results are in the database). */
export interface SavedAIColumn {
  name: string;
  criteria: string;
  type: AIColumnType;
  filter: AIFilter | null;
}

export const savedAIColumns = (columns: readonly AIColumn[]): SavedAIColumn[] =>
  columns.map(({ name, criteria, type, filter }) => ({ name, criteria, type, filter }));


/** The saved columns a view's JSON holds (anything malformed is dropped). */
export function parseSavedAIColumns(value: unknown): SavedAIColumn[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((v: Record<string, unknown>) => {
    if (!v || typeof v.name !== "string" || typeof v.criteria !== "string" || !v.name.trim() || !v.criteria.trim()) return [];
    const filter = AI_FILTERS.includes(v.filter as AIFilter) ? (v.filter as AIFilter) : null;
    return [{ name: v.name, criteria: v.criteria, type: v.type === "boolean" ? "boolean" : "text", filter } as SavedAIColumn];
  });
}

/** Coerce a suggestion's data into a column, refusing ones without a name or criteria. */
export function columnFromPayload(data: Record<string, unknown>): { name: string; criteria: string; type: AIColumnType } {
  const name = typeof data.name === "string" ? data.name.trim() : "";
  const criteria = typeof data.criteria === "string" ? data.criteria.trim() : "";
  if (!name || !criteria) throw new Error("This column suggestion has no name or criteria.");
  return { name, criteria, type: data.type === "boolean" ? "boolean" : "text" };
}
