/**
 * Filters on a results table, shown as removable chips: a chart click ("Phase 3"), an accepted
 * `filter_suggestion` ("journal contains Lancet"). A filter either narrows the loaded rows, or —
 * where the page's search has that field (TrialScout's phase, status, location) — is applied to the
 * search itself, so it covers the whole result set; removing its chip undoes it either way.
 *
 * Pages describe their rows as named fields (`RowFields`); a filter on a field the page does not
 * name is refused with a readable message rather than silently matching nothing.
 */
import { useCallback, useState } from "react";

export type FilterOp = "equals" | "contains" | "gte" | "lte" | "between";
export type FieldValue = string | number | null | undefined | ReadonlyArray<string | number>;
export type RowFields<Row> = Readonly<Record<string, (row: Row) => FieldValue>>;

export interface TableFilter {
  /** field, operator and value: the same filter twice is one chip. */
  id: string;
  field: string;
  op: FilterOp;
  value: string | number;
  /** The inclusive upper end of a `between` filter. */
  upper?: number;
  /** What the chip says, e.g. "Phase: Phase 3". */
  label: string;
  /** `search`: applied to the page's search; `rows`: narrows the loaded rows. */
  scope: "search" | "rows";
}

const OPS: ReadonlySet<string> = new Set(["equals", "contains", "gte", "lte", "between"]);

export function makeFilter(f: Omit<TableFilter, "id">): TableFilter {
  return { ...f, id: [f.field, f.op, String(f.value), f.upper ?? ""].join("\u0000") };
}

function asNumber(value: string | number): number {
  return typeof value === "number" ? value : Number(String(value).trim());
}

function one(value: string | number, f: TableFilter): boolean {
  switch (f.op) {
    case "equals":
      return String(value).toLowerCase() === String(f.value).toLowerCase();
    case "contains":
      return String(value).toLowerCase().includes(String(f.value).toLowerCase());
    case "gte":
      return asNumber(value) >= asNumber(f.value);
    case "lte":
      return asNumber(value) <= asNumber(f.value);
    case "between":
      return asNumber(value) >= asNumber(f.value) && (f.upper == null || asNumber(value) <= f.upper);
  }
}

/** Does a row's value pass? A list passes when any item does; a missing value never does. */
export function matchesFilter(value: FieldValue, f: TableFilter): boolean {
  if (value == null || value === "") return false;
  const items: ReadonlyArray<string | number> = Array.isArray(value) ? value : [value as string | number];
  return items.some((item) => item != null && item !== "" && one(item, f));
}

/** The rows that pass every `rows`-scoped filter (search-scoped ones were applied upstream). */
export function applyTableFilters<Row>(rows: Row[], filters: readonly TableFilter[], fields: RowFields<Row>): Row[] {
  const active = filters.filter((f) => f.scope === "rows" && fields[f.field]);
  if (!active.length) return rows;
  return rows.filter((row) => active.every((f) => matchesFilter(fields[f.field](row), f)));
}

/** A chart bucket as a filter: enrollment bins ("100-249", "5000+") become ranges, the rest equality. */
export function facetFilter(facet: string, facetLabel: string, value: string, valueLabel: string,
                            scope: TableFilter["scope"] = "rows"): TableFilter {
  const bin = /^(\d+)(?:-(\d+)|\+)$/.exec(value);
  if (facet === "enrollment" && bin) {
    return makeFilter({ field: facet, op: bin[2] ? "between" : "gte", value: Number(bin[1]),
                        ...(bin[2] ? { upper: Number(bin[2]) } : {}), label: `${facetLabel}: ${valueLabel}`, scope });
  }
  return makeFilter({ field: facet, op: "equals", value, label: `${facetLabel}: ${valueLabel}`, scope });
}

const OP_WORDS: Record<FilterOp, string> = { equals: "is", contains: "contains", gte: "≥", lte: "≤", between: "in" };

/**
 * A `filter_suggestion` payload ({field, operator, value}) as a rows filter; throws a readable Error
 * when this table has no such field or the value does not fit the operator.
 */
export function filterFromSuggestion<Row>(data: Record<string, unknown>, fields: RowFields<Row>,
                                     fieldLabels: Readonly<Record<string, string>> = {}): TableFilter {
  const field = typeof data.field === "string" ? data.field.trim() : "";
  const op = typeof data.operator === "string" ? data.operator : "";
  const value = data.value;
  if (!field || !Object.prototype.hasOwnProperty.call(fields, field)) {
    throw new Error(`This table cannot filter on "${field || "?"}"; it can filter on ${Object.keys(fields).join(", ")}.`);
  }
  if (!OPS.has(op) || op === "between") throw new Error(`Unknown filter operator "${op}".`);
  if (typeof value !== "string" && typeof value !== "number") throw new Error("The filter has no value.");
  if ((op === "gte" || op === "lte") && !Number.isFinite(asNumber(value))) {
    throw new Error(`"${value}" is not a number, so it cannot be compared with ${OP_WORDS[op as FilterOp]}.`);
  }
  const name = fieldLabels[field] ?? field.replace(/_/g, " ");
  return makeFilter({ field, op: op as FilterOp, value, label: `${name} ${OP_WORDS[op as FilterOp]} ${value}`, scope: "rows" });
}

/** The page's list of filters: adding one that exists replaces it, removing is by id. */
export function useTableFilters() {
  const [filters, setFilters] = useState<TableFilter[]>([]);
  const add = useCallback((f: TableFilter) => setFilters((list) => [...list.filter((x) => x.id !== f.id), f]), []);
  const remove = useCallback((id: string) => setFilters((list) => list.filter((x) => x.id !== id)), []);
  const clear = useCallback(() => setFilters([]), []);
  return { filters, add, remove, clear, setFilters };
}
