/**
 * What else is on screen beside the rows, for the page context: the filter chips (and how many loaded rows
 * they hide), the pinned charts, the counts named as such (total matched, loaded, shown), and the open
 * item's key fields. The spec's rule: if the user sees it and it's dynamic, it's in the context.
 */
import type { ChartSpec } from "../../charts/chartSpec";
import type { TableFilter } from "./tableFilters";

export interface ScreenState {
  filters: readonly TableFilter[];
  charts: readonly ChartSpec[];
  /** Rows loaded into the table (before any filter). */
  loaded: number;
  /** Rows the table shows (after the chips and the AI column filters). */
  shown: number;
}

/** The state both results pages add to their context beside their own: paging, the stream, the screen, the open item. */
export interface ResultsContextState {
  page: number;
  pageSize: number;
  streamId?: number | null;
  /** The chips, pinned charts and counts (`screenContext`); their `loaded_count` is the rows before filters. */
  screen?: Record<string, unknown>;
  /** The open item's key fields (`openItemFields`). */
  openItem?: Record<string, unknown> | null;
}

export function screenContext(s: ScreenState): Record<string, unknown> {
  return {
    loaded_count: s.loaded,
    shown_count: s.shown,
    filters: s.filters.map((f) => ({ label: f.label, field: f.field, op: f.op, value: f.value, scope: f.scope,
                                     ...(f.upper != null ? { upper: f.upper } : {}) })),
    pinned_charts: s.charts.map((c) => ({ title: c.title ?? null, facet: c.facet, kind: c.kind,
                                          ...(c.stackBy ? { stack_by: c.stackBy } : {}) })),
  };
}

const TEXT_LIMIT = 600;

/** An open record's key fields (the id first): short values whole, long texts clipped, lists of names. */
export function openItemFields(id: [string, string], item: object | null | undefined, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { [id[0]]: id[1] };
  if (!item) return out;
  const record = item as Record<string, unknown>;
  for (const key of keys) {
    const value = record[key];
    if (value == null || value === "" || (Array.isArray(value) && !value.length)) continue;
    if (typeof value === "string") out[key] = value.length > TEXT_LIMIT ? `${value.slice(0, TEXT_LIMIT)}…` : value;
    else if (Array.isArray(value)) out[key] = value.slice(0, 12).map((v) => (typeof v === "object" && v ? nameOf(v) : v));
    else if (typeof value === "object") continue;
    else out[key] = value;
  }
  return out;
}

function nameOf(v: object): unknown {
  const r = v as Record<string, unknown>;
  return r.name ?? r.measure ?? r.title ?? r.facility ?? JSON.stringify(v).slice(0, 80);
}

export const ARTICLE_OPEN_FIELDS = ["title", "journal", "year", "authors", "publication_types", "mesh_terms", "abstract"] as const;
export const TRIAL_OPEN_FIELDS = ["title", "phase", "status", "conditions", "interventions", "sponsor", "enrollment",
  "start_date", "primary_outcomes", "brief_summary"] as const;
