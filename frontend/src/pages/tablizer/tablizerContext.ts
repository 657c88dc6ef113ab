/**
 * Tablizer's page state as the chat sees it: the spec's Tablizer context
 * (tablizer-trialscout-chat-integration.md, "Tablizer Context"), built from
 * live state, plus snapshot comparison.
 */
import type { Article } from "../../api/types";
import { aiColumnsContext, type AIColumn } from "../common/aiColumns";
import type { ResultsContextState } from "../common/screenContext";

export type ArticleSort = "relevance" | "date";

export interface Snapshot {
  id: string;
  label: string;
  query: string;
  dateStart: string;
  dateEnd: string;
  totalCount: number;
  articles: Article[];
}

export interface Comparison {
  onlyA: Article[];
  onlyB: Article[];
  both: Article[];
}

export type CompareGroup = keyof Comparison;

/**
 * A suggestion's partial date ("2020", "2020-05", "2020-05-17") as a date input value: the first day
 * of the period for a start, the last for an end. Anything else is "" (no bound).
 */
export function dateInputValue(value: unknown, end: boolean): string {
  const m = typeof value === "string" ? /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$/.exec(value.trim()) : null;
  if (!m) return "";
  const [, y, mo, d] = m;
  if (d) return `${y}-${mo}-${d}`;
  if (mo) return end ? `${y}-${mo}-${String(new Date(Date.UTC(+y, +mo, 0)).getUTCDate()).padStart(2, "0")}` : `${y}-${mo}-01`;
  return end ? `${y}-12-31` : `${y}-01-01`;
}

export function compareSnapshots(a: Snapshot, b: Snapshot): Comparison {
  const inA = new Set(a.articles.map((x) => x.pmid));
  const inB = new Set(b.articles.map((x) => x.pmid));
  return {
    onlyA: a.articles.filter((x) => !inB.has(x.pmid)),
    onlyB: b.articles.filter((x) => !inA.has(x.pmid)),
    both: a.articles.filter((x) => inB.has(x.pmid)),
  };
}

export interface TablizerState extends ResultsContextState {
  query: string;
  dateStart: string;
  dateEnd: string;
  totalMatched: number;
  /** The rows the table shows now (live page, a snapshot, or a comparison group). */
  rows: Article[];
  snapshots: Snapshot[];
  selectedSnapshotId: string | null;
  compare: [string, string] | null;
  aiColumns: AIColumn[];
  selectedPmids: string[];
  sort: ArticleSort;
  viewerPmid: string | null;
}

const yearOf = (year: unknown): number | string | null => {
  if (year == null || year === "") return null;
  const n = Number(year);
  return Number.isFinite(n) ? n : String(year);
};

export function buildTablizerContext(s: TablizerState): Record<string, unknown> {
  const context: Record<string, unknown> = {
    current_page: "tablizer",
    query: s.query,
    date_start: s.dateStart || null,
    date_end: s.dateEnd || null,
    total_matched: s.totalMatched,
    loaded_count: s.rows.length,
    snapshots: s.snapshots.map((x) => ({ id: x.id, label: x.label, query: x.query, count: x.articles.length })),
    selected_snapshot_id: s.selectedSnapshotId,
    compare_mode: s.compare !== null,
    compare_snapshots: s.compare,
    ai_columns: aiColumnsContext(s.aiColumns),
    // Every loaded row: the backend stages large lists itself (holding pen).
    articles: s.rows.map((a) => ({ pmid: a.pmid, title: a.title, year: yearOf(a.year), journal: a.journal ?? null })),
    selected_pmids: s.selectedPmids,
    sort: { field: s.sort, direction: "desc" },
    pagination: { page: s.page, page_size: s.pageSize },
    viewer: s.openItem ?? (s.viewerPmid ? { pmid: s.viewerPmid } : null),
    ...s.screen,
  };
  if (s.streamId != null) context.stream_id = s.streamId;
  return context;
}
