/** Tablizer's part of the URL: its search, sort, page and the article open in the panel. */
import type { UrlPatch } from "../../state/urlState";
import type { ArticleSort } from "./tablizerContext";

/** A PubMed search as Tablizer runs it. */
export interface TablizerSearch {
  query: string;
  dateStart: string;
  dateEnd: string;
  sort: ArticleSort;
  page: number;
  pageSize: number;
}

export interface TablizerUrl extends TablizerSearch {
  /** The PMID open in the detail panel. */
  open: string | null;
}

export const TABLIZER_KEYS = ["q", "from", "to", "sort", "page", "size", "open"] as const;
export const PAGE_SIZES = [25, 50, 100];

function positive(value: string | null, fallback: number): number {
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 && n <= 100_000 ? n : fallback;
}

const isoDate = (value: string | null) => (value && /^\d{4}-\d{2}-\d{2}$/.test(value) ? value : "");

export function encodeTablizer(s: TablizerUrl): UrlPatch {
  return {
    q: s.query.trim() || null,
    from: s.dateStart || null,
    to: s.dateEnd || null,
    sort: s.sort === "relevance" ? null : s.sort,
    page: s.page > 1 ? String(s.page) : null,
    size: s.pageSize === PAGE_SIZES[0] ? null : String(s.pageSize),
    open: s.open,
  };
}

export function decodeTablizer(params: URLSearchParams): TablizerUrl {
  const size = positive(params.get("size"), PAGE_SIZES[0]);
  return {
    query: params.get("q") ?? "",
    dateStart: isoDate(params.get("from")),
    dateEnd: isoDate(params.get("to")),
    sort: params.get("sort") === "date" ? "date" : "relevance",
    page: positive(params.get("page"), 1),
    pageSize: PAGE_SIZES.includes(size) ? size : PAGE_SIZES[0],
    open: /^\d{1,10}$/.test(params.get("open") ?? "") ? params.get("open") : null,
  };
}
