/**
 * TrialScout's search form, its query parameters, and the spec's TrialScout
 * context built from live state.
 */
import { PHASES, SEXES, STATUSES, STUDY_TYPES } from "../../api/trialVocabulary";
import type { PatientProfile } from "../../api/screening";
import type { TrialSummary } from "../../api/types";
import { aiColumnsContext, type AIColumn } from "../common/aiColumns";
import type { ResultsContextState } from "../common/screenContext";

export interface TrialForm {
  condition: string;
  intervention: string;
  sponsor: string;
  phase: string[];
  status: string[];
  location: string;
  sex: string;
  /** "" (any), INTERVENTIONAL or OBSERVATIONAL. */
  study_type: string;
  min_age: string;
  max_age: string;
  eligibility_keywords: string;
}

export const emptyTrialForm: TrialForm = {
  condition: "",
  intervention: "",
  sponsor: "",
  phase: [],
  status: [],
  location: "",
  sex: "ALL",
  study_type: "",
  min_age: "",
  max_age: "",
  eligibility_keywords: "",
};

export type TrialSortField = "nct_id" | "title" | "phase" | "status" | "enrollment" | "sponsor";
export interface TrialSort {
  /** A grid column's id (`TrialSortField`, an AI column's `ai:<name>`, or another added column). */
  field: string | null;
  direction: "asc" | "desc";
}

const text = (v: unknown): string => (typeof v === "string" ? v.trim() : typeof v === "number" ? String(v) : "");

/** Ages are whole years ("18", 18, "18 Years" → "18"); anything else is no limit. */
function years(v: unknown): string {
  const n = Number.parseInt(text(v), 10);
  return Number.isFinite(n) && n >= 0 && n <= 120 ? String(n) : "";
}

const yearsOrNull = (v: string): number | null => (years(v) === "" ? null : Number(years(v)));

/** Match enum values loosely ("Phase 2", "phase_2", "N/A" → PHASE2, NA); drop what matches nothing. */
function enumList(v: unknown, allowed: readonly string[]): string[] {
  const squash = (x: string) => x.toUpperCase().replace(/[^A-Z0-9]/g, "");
  const bySquashed = new Map(allowed.map((a) => [squash(a), a]));
  const items = Array.isArray(v) ? v : typeof v === "string" && v ? v.split(",") : [];
  const matched = items.map((x) => bySquashed.get(squash(String(x)))).filter((x): x is string => Boolean(x));
  return [...new Set(matched)];
}

/** A `trial_search_suggestion` fills the whole form: fields it does not name are cleared. */
export function formFromSuggestion(data: Record<string, unknown>): TrialForm {
  const sex = text(data.sex).toUpperCase();
  const studyType = text(data.study_type).toUpperCase();
  return {
    condition: text(data.condition),
    intervention: text(data.intervention),
    sponsor: text(data.sponsor),
    phase: enumList(data.phase, PHASES),
    status: enumList(data.status, STATUSES),
    location: text(data.location),
    sex: (SEXES as readonly string[]).includes(sex) ? sex : "ALL",
    study_type: (STUDY_TYPES as readonly string[]).includes(studyType) ? studyType : "",
    min_age: years(data.min_age),
    max_age: years(data.max_age),
    eligibility_keywords: text(data.eligibility_keywords),
  };
}

/** "Find trials for this patient": the trials that would take this patient, as PRESCREEN searches them: the main
 * condition (not a past treatment), the patient's sex, and the age both ends of a trial's age range must admit. */
export function patientTrialForm(profile: Pick<PatientProfile, "conditions" | "sex" | "age">): TrialForm {
  const age = profile.age == null ? "" : Math.floor(profile.age);
  return formFromSuggestion({ condition: profile.conditions?.[0] ?? "", sex: profile.sex ?? "", min_age: age, max_age: age });
}

export function isFormEmpty(form: TrialForm): boolean {
  return !form.condition && !form.intervention && !form.sponsor && !form.location && !form.eligibility_keywords &&
    form.phase.length === 0 && form.status.length === 0 && !form.min_age && !form.max_age && form.sex === "ALL" &&
    !form.study_type;
}

/** Query parameters for GET /api/trials/search (arrays repeat their key; "ALL" sex is no filter). */
export function trialSearchParams(form: TrialForm, pageSize: number, pageToken: string | null): Record<string, unknown> {
  return {
    condition: form.condition,
    intervention: form.intervention,
    sponsor: form.sponsor,
    phase: form.phase,
    status: form.status,
    location: form.location,
    sex: form.sex === "ALL" ? "" : form.sex,
    study_type: form.study_type,
    min_age: years(form.min_age),
    max_age: years(form.max_age),
    eligibility_keywords: form.eligibility_keywords,
    page_size: pageSize,
    page_token: pageToken ?? "",
  };
}

function sortKey(t: TrialSummary, field: TrialSortField): string | number {
  const v = t[field];
  if (field === "enrollment") return typeof v === "number" ? v : -1;
  return Array.isArray(v) ? v.join(",") : String(v ?? "");
}

/** Client-side sort over the loaded page. */
export function sortTrials(trials: TrialSummary[], sort: TrialSort): TrialSummary[] {
  const field = sort.field as TrialSortField | null;
  if (!field) return trials;
  const dir = sort.direction === "asc" ? 1 : -1;
  return [...trials].sort((a, b) => {
    const x = sortKey(a, field);
    const y = sortKey(b, field);
    const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
    return c * dir;
  });
}

export interface TrialScoutState extends ResultsContextState {
  form: TrialForm;
  totalMatched: number | null;
  rows: TrialSummary[];
  aiColumns: AIColumn[];
  selectedNctIds: string[];
  sort: TrialSort;
  viewerNctId: string | null;
}

export function buildTrialScoutContext(s: TrialScoutState): Record<string, unknown> {
  const context: Record<string, unknown> = {
    current_page: "trialscout",
    condition: s.form.condition,
    intervention: s.form.intervention,
    sponsor: s.form.sponsor,
    phase: s.form.phase,
    status: s.form.status,
    location: s.form.location,
    sex: s.form.sex,
    study_type: s.form.study_type || null,
    min_age: yearsOrNull(s.form.min_age),
    max_age: yearsOrNull(s.form.max_age),
    eligibility_keywords: s.form.eligibility_keywords,
    total_matched: s.totalMatched,
    loaded_count: s.rows.length,
    ai_columns: aiColumnsContext(s.aiColumns),
    trials: s.rows.map((t) => ({
      nct_id: t.nct_id,
      title: t.title,
      phase: t.phase ?? null,
      status: t.status ?? null,
      enrollment: t.enrollment ?? null,
      sponsor: t.sponsor ?? null,
    })),
    selected_nct_ids: s.selectedNctIds,
    sort: { field: s.sort.field, direction: s.sort.direction },
    pagination: { page: s.page, page_size: s.pageSize },
    viewer: s.openItem ?? (s.viewerNctId ? { nct_id: s.viewerNctId } : null),
    ...s.screen,
  };
  if (s.streamId != null) context.stream_id = s.streamId;
  return context;
}
