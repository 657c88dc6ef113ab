/**
 * The view in the URL, so a reload, Back/Forward and a pasted link show the same thing: each page's search
 * (query, filters, sort, page), the row open in the detail panel, and the shell's chat tray (open, and which
 * conversation). Every part owns its own parameters and patches only those, keeping the others.
 */
import { useEffect, useRef } from "react";
import { navigate, useLocation } from "../../router";
import type { ArticleSort } from "../tablizer/tablizerContext";
import { emptyTrialForm, type TrialForm, type TrialSort, type TrialSortField } from "../trialscout/trialscoutContext";

export type UrlPatch = Record<string, string | null>;

/** The current URL with `patch` applied (null removes a parameter); pushes a history entry when `push`. */
export function patchUrl(patch: UrlPatch, { push = false } = {}): void {
  const params = new URLSearchParams(window.location.search);
  for (const [key, value] of Object.entries(patch)) {
    if (value == null || value === "") params.delete(key);
    else params.set(key, value);
  }
  const query = params.toString();
  navigate(`${window.location.pathname}${query ? `?${query}` : ""}`, { replace: !push });
}

// -- Tablizer ------------------------------------------------------------------------------------------

export interface TablizerUrl {
  query: string;
  dateStart: string;
  dateEnd: string;
  sort: ArticleSort;
  page: number;
  pageSize: number;
  /** The PMID open in the detail panel. */
  open: string | null;
}

export const TABLIZER_KEYS = ["q", "from", "to", "sort", "page", "size", "open"] as const;
const PAGE_SIZES = [25, 50, 100];

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

// -- TrialScout ----------------------------------------------------------------------------------------

export interface TrialScoutUrl {
  form: TrialForm;
  /** The page tokens after the first page: [] on page 1, [t2] on page 2, [t2, t3] on page 3… */
  tokens: string[];
  sort: TrialSort;
  /** The NCT id open in the detail panel. */
  open: string | null;
}

const TEXT_FIELDS = ["condition", "intervention", "sponsor", "location", "min_age", "max_age", "eligibility_keywords"] as const;
const SHORT: Record<(typeof TEXT_FIELDS)[number], string> = {
  condition: "cond",
  intervention: "intr",
  sponsor: "spon",
  location: "loc",
  min_age: "minage",
  max_age: "maxage",
  eligibility_keywords: "kw",
};
const SORT_FIELDS: TrialSortField[] = ["nct_id", "title", "phase", "status", "enrollment", "sponsor"];

export const TRIALSCOUT_KEYS = [...Object.values(SHORT), "phase", "status", "sex", "sort", "dir", "pages", "open"] as const;

export function encodeTrialScout(s: TrialScoutUrl): UrlPatch {
  const patch: UrlPatch = {};
  for (const field of TEXT_FIELDS) patch[SHORT[field]] = s.form[field].trim() || null;
  patch.phase = s.form.phase.join(",") || null;
  patch.status = s.form.status.join(",") || null;
  patch.sex = s.form.sex && s.form.sex !== "ALL" ? s.form.sex : null;
  patch.sort = s.sort.field;
  patch.dir = s.sort.field && s.sort.direction === "desc" ? "desc" : null;
  // Page tokens are opaque and never contain a space; a space-separated list survives the URL as "+".
  patch.pages = s.tokens.length ? s.tokens.join(" ") : null;
  patch.open = s.open;
  return patch;
}

export function decodeTrialScout(params: URLSearchParams): TrialScoutUrl {
  const form: TrialForm = { ...emptyTrialForm, phase: [], status: [] };
  for (const field of TEXT_FIELDS) form[field] = params.get(SHORT[field]) ?? "";
  const list = (key: string) => (params.get(key) ?? "").split(",").map((v) => v.trim()).filter(Boolean);
  form.phase = list("phase");
  form.status = list("status");
  form.sex = ["ALL", "FEMALE", "MALE"].includes(params.get("sex") ?? "") ? (params.get("sex") as string) : "ALL";
  const field = params.get("sort");
  const sortField = SORT_FIELDS.includes(field as TrialSortField) ? (field as TrialSortField) : null;
  const open = (params.get("open") ?? "").toUpperCase();
  return {
    form,
    tokens: (params.get("pages") ?? "").split(" ").filter(Boolean),
    sort: { field: sortField, direction: sortField && params.get("dir") === "desc" ? "desc" : "asc" },
    open: /^NCT\d{8}$/.test(open) ? open : null,
  };
}

/** Whether a URL names a search to run (anything beyond the defaults). */
export function trialUrlHasSearch(url: TrialScoutUrl): boolean {
  return JSON.stringify(url.form) !== JSON.stringify({ ...emptyTrialForm, phase: [], status: [] });
}

// -- The chat tray ---------------------------------------------------------------------------------------

/** `chat=1` keeps the tray open; `c=<id>` names its conversation. */
export function chatFromUrl(params: URLSearchParams): { open: boolean; conversation: number | null } {
  const id = Number(params.get("c"));
  return { open: params.get("chat") === "1", conversation: Number.isInteger(id) && id >= 1 && id < 2 ** 31 ? id : null };
}

export function encodeChat(open: boolean, conversation: number | null): UrlPatch {
  return { chat: open ? "1" : null, c: open && conversation != null ? String(conversation) : null };
}

// -- Keeping a page and its URL in step -------------------------------------------------------------------

/**
 * Keeps a page's view and its URL parameters in step. On mount and on Back/Forward (any URL change this hook
 * did not write) the page `apply`s what the URL says; when the page's `current` view changes the URL follows,
 * as a new history entry when `entry` (e.g. the search and its page) changed, replacing the current one otherwise
 * (the row open in the panel). `current` null: the page has nothing to say yet (the URL is left as it is).
 */
export function useUrlSync<T>(opts: {
  encode: (view: T) => UrlPatch;
  decode: (params: URLSearchParams) => T;
  current: T | null;
  apply: (view: T) => void;
  entry: (view: T) => string;
}) {
  const { search } = useLocation();
  const optsRef = useRef(opts);
  optsRef.current = opts;
  const written = useRef<string | null>(null);
  const lastEntry = useRef<string | null>(null);

  // The URL changed under the page (mount, Back/Forward, a pasted link): show what it says.
  useEffect(() => {
    if (written.current === search) return;
    written.current = search;
    const view = optsRef.current.decode(new URLSearchParams(search));
    lastEntry.current = optsRef.current.entry(view);
    optsRef.current.apply(view);
  }, [search]);

  // The page changed: the URL follows.
  const encoded = opts.current == null ? null : JSON.stringify(opts.encode(opts.current));
  useEffect(() => {
    const { current, encode, entry } = optsRef.current;
    if (current == null || encoded == null) return;
    const key = entry(current);
    patchUrl(encode(current), { push: lastEntry.current != null && key !== lastEntry.current });
    lastEntry.current = key;
    written.current = window.location.search;
  }, [encoded]);
}
