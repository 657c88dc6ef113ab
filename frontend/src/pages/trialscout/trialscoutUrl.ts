/** TrialScout's part of the URL: its search form, page tokens, sort and the trial open in the panel. */
import type { UrlPatch } from "../../state/urlState";
import { emptyTrialForm, type TrialForm, type TrialSort, type TrialSortField } from "./trialscoutContext";

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
const SORT_FIELDS: TrialSortField[] = ["nct_id", "title", "phase", "status", "enrollment", "sponsor", "fit"];

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
