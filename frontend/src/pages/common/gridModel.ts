/**
 * The results grid's column model, without React: every column (a page's own, an AI column, a column a
 * colleague's feature adds) is one `GridColumn`, with the value it sorts by. Sorting puts blanks last in
 * either direction (a blank is never "smallest"), and AI verdicts sort Yes, No, Unknown, then blanks.
 */
import type { ReactNode } from "react";
import { cellCategory, type AIColumn } from "./aiColumnState";

export type SortValue = string | number | null | undefined;

export interface GridColumn<Row> {
  /** Unique among the page's columns; the key in the saved view's sort and visibility. */
  id: string;
  label: string;
  cell: (row: Row) => ReactNode;
  /** What the column sorts by; null/undefined/"" are blanks (sorted last). */
  value: (row: Row) => SortValue;
  className?: string;
  /** The cell is the row's title: a real link (`href`) that opens the row here on a plain click. */
  title?: boolean;
  /** Not shown until the user picks it in the column chooser. */
  hiddenByDefault?: boolean;
  /** Cannot be hidden (the row's id). */
  required?: boolean;
}

export interface GridSort {
  field: string | null;
  direction: "asc" | "desc";
}

export const NO_SORT: GridSort = { field: null, direction: "asc" };

const isBlank = (v: SortValue) => v == null || v === "" || (typeof v === "number" && Number.isNaN(v));

export function compareValues(a: SortValue, b: SortValue): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b), "en", { numeric: true, sensitivity: "base" });
}

/** The rows in the sort's order (stable; blanks last in both directions); unchanged without a known field. */
export function sortRows<Row>(rows: readonly Row[], columns: ReadonlyArray<GridColumn<Row>>, sort: GridSort): Row[] {
  const column = sort.field ? columns.find((c) => c.id === sort.field) : undefined;
  if (!column) return [...rows];
  const dir = sort.direction === "desc" ? -1 : 1;
  const keyed = rows.map((row, index) => ({ row, index, value: column.value(row) }));
  keyed.sort((x, y) => {
    const bx = isBlank(x.value);
    const by = isBlank(y.value);
    if (bx || by) return bx === by ? x.index - y.index : bx ? 1 : -1;
    return compareValues(x.value, y.value) * dir || x.index - y.index;
  });
  return keyed.map((k) => k.row);
}

/** Header click: a new column sorts ascending, the same one flips, a third click clears. */
export function nextSort(sort: GridSort, field: string): GridSort {
  if (sort.field !== field) return { field, direction: "asc" };
  return sort.direction === "asc" ? { field, direction: "desc" } : NO_SORT;
}

const VERDICT_RANK: Record<string, number> = { yes: 0, conditional: 1, no: 2, needs_review: 3, unknown: 4 };

/** An AI column's id in the grid: stable across reloads (the saved view names it), unlike its run id. */
export const aiColumnId = (column: Pick<AIColumn, "name">) => `ai:${column.name}`;

/** The value an AI column sorts by: Yes, conditional, No, needs review, Unknown (boolean) or the answer (text); pending/errors are blank. */
export function aiSortValue(column: AIColumn, rowId: string): SortValue {
  const category = cellCategory(column.type, column.run.cells[rowId]);
  if (category === "pending" || category === "error") return undefined;
  if (column.type === "boolean") return VERDICT_RANK[category];
  if (category === "unknown") return undefined;
  const cell = column.run.cells[rowId];
  return cell?.status === "done" ? cell.display ?? undefined : undefined;
}

/** The columns shown: the page's order, less the hidden ones (a required column always shows). */
export function shownColumns<Row>(columns: ReadonlyArray<GridColumn<Row>>, hidden: ReadonlySet<string>): Array<GridColumn<Row>> {
  return columns.filter((c) => c.required || !hidden.has(c.id));
}

/** The hidden set a page starts with: its columns hidden by default. */
export function defaultHidden<Row>(columns: ReadonlyArray<GridColumn<Row>>): string[] {
  return columns.filter((c) => c.hiddenByDefault).map((c) => c.id);
}

/** The selection bar's words: "3 selected". */
export const selectionLabel = (count: number) => `${count} selected`;
