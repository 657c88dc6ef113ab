/**
 * The part of a saved view both results pages share: AI columns, table filters, grid sort, hidden columns,
 * pinned charts, selection and whether the search form is folded. Each page adds its own search to it.
 * Decoding is defensive: a view saved by an older page (or edited by hand) restores what it can.
 */
import { useCallback, useState } from "react";
import { useShell } from "../../shellContext";
import { chatFromUrl } from "../../state/urlState";
import { draftKey } from "../../chat/useDraft";
import type { App } from "../../api/types";
import type { ChartSpec } from "../../charts/chartSpec";
import { parseSavedAIColumns, savedAIColumns, type AIColumns, type SavedAIColumn } from "./aiColumns";
import type { TableFilter } from "./tableFilters";
import { NO_SORT, type GridSort } from "./gridModel";

export interface GridViewState {
  sort: GridSort;
  /** null: the page's default (a view saved before the user chose columns). */
  hidden: string[] | null;
  aiColumns: SavedAIColumn[];
  charts: ChartSpec[];
  filters: TableFilter[];
  selected: string[];
  collapsed: boolean;
}

const strings = (v: unknown, max: number): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === "string").slice(0, max) : [];
const objects = <T>(v: unknown, keys: string[]): T[] =>
  Array.isArray(v) ? (v.filter((x) => x && typeof x === "object" && keys.every((k) => k in x)) as T[]) : [];

export function decodeGridView(json: Record<string, unknown>): GridViewState {
  const sort = (json.sort ?? {}) as Record<string, unknown>;
  return {
    sort: typeof sort.field === "string" ? { field: sort.field, direction: sort.direction === "desc" ? "desc" : "asc" } : NO_SORT,
    hidden: Array.isArray(json.hidden) ? strings(json.hidden, 50) : null,
    aiColumns: parseSavedAIColumns(json.aiColumns).slice(0, 10),
    charts: objects<ChartSpec>(json.charts, ["id", "kind", "facet"]).slice(0, 12),
    filters: objects<TableFilter>(json.filters, ["id", "field", "op", "value", "label", "scope"]).slice(0, 20),
    selected: strings(json.selected, 500),
    collapsed: json.collapsed === true,
  };
}

/** The grid's own state on a page: hidden columns and the folded search form (sort and selection are the page's). */
export function useGridState(defaultHidden: readonly string[]) {
  const [hidden, setHidden] = useState<Set<string>>(() => new Set(defaultHidden));
  const [collapsed, setCollapsed] = useState(false);
  return { hidden, setHidden, collapsed, setCollapsed, defaultHidden };
}

export function gridViewOf(g: { sort: GridSort; hidden: ReadonlySet<string>; ai: AIColumns; charts: ChartSpec[]; filters: TableFilter[];
                                selected: ReadonlySet<string>; collapsed: boolean }): GridViewState {
  return {
    sort: g.sort,
    hidden: [...g.hidden].sort(),
    aiColumns: savedAIColumns(g.ai.columns),
    charts: g.charts,
    filters: g.filters,
    selected: [...g.selected].sort(),
    collapsed: g.collapsed,
  };
}

/** Put a saved view's grid parts back on the page (its search is the page's to run; the selection comes after). */
export function applyGridView(v: GridViewState, to: {
  setSort: (sort: GridSort) => void;
  grid: ReturnType<typeof useGridState>;
  ai: AIColumns;
  insights: { setCharts: (charts: ChartSpec[]) => void; setFilters: (filters: TableFilter[]) => void };
}): void {
  to.setSort(v.sort);
  to.grid.setHidden(new Set(v.hidden ?? to.grid.defaultHidden));
  to.grid.setCollapsed(v.collapsed);
  to.ai.replaceAll(v.aiColumns);
  to.insights.setCharts(v.charts);
  to.insights.setFilters(v.filters);
}

/** "Ask about these": the tray opens with a question about the selected rows ready to send (not sent). */
export function useAskAbout(app: App) {
  const { chatOpen, setChatOpen } = useShell();
  return useCallback(
    (ids: readonly string[], one: string) => {
      const text = `About the ${ids.length} selected ${ids.length === 1 ? one : `${one}s`} (${ids.join(", ")}): `;
      const conversation = chatFromUrl(new URLSearchParams(window.location.search)).conversation;
      try {
        localStorage.setItem(draftKey(app, conversation), text);
      } catch {
        // no storage: the tray opens without the draft
      }
      // An open tray read its draft when it opened: open it afresh so it shows this one.
      if (chatOpen) {
        setChatOpen(false);
        setTimeout(() => setChatOpen(true), 0);
      } else setChatOpen(true);
    },
    [app, chatOpen, setChatOpen],
  );
}
