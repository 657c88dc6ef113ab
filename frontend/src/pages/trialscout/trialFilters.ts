/**
 * TrialScout's table filters: which fields a filter can narrow the loaded rows by, and which chart
 * clicks go to the search instead (phase, status, country → the form's phase, status, location), so
 * they cover the whole result set and the table re-runs the search.
 */
import type { TrialSummary } from "../../api/types";
import type { ChartSelection } from "../../charts/ChartView";
import { facetLabel, valueLabel } from "../../charts/chartSpec";
import { facetFilter, type RowFields, type TableFilter } from "../common/tableFilters";
import { trialSearchParams, type TrialForm } from "./trialscoutContext";

export const TRIAL_ROW_FIELDS: RowFields<TrialSummary> = {
  phase: (t) => t.phase ?? [],
  status: (t) => t.status,
  study_type: (t) => t.study_type,
  sponsor: (t) => t.sponsor,
  enrollment: (t) => t.enrollment,
  start_year: (t) => (t.start_date ? t.start_date.slice(0, 4) : null),
  condition: (t) => t.conditions ?? [],
  intervention: (t) => t.interventions ?? [],
};

export const TRIAL_FIELD_LABELS: Readonly<Record<string, string>> = {
  phase: "Phase", status: "Status", study_type: "Study type", sponsor: "Sponsor", enrollment: "Enrollment",
  start_year: "Start year", condition: "Condition", intervention: "Intervention",
};

/** The submitted form as the statistics route's `search` (empty fields left out). */
export function trialStatsSearch(form: TrialForm): Record<string, unknown> {
  const { page_size: _size, page_token: _token, ...params } = trialSearchParams(form, 1, null);
  return Object.fromEntries(Object.entries(params).filter(([, v]) => v !== "" && v != null && !(Array.isArray(v) && !v.length)));
}

type SearchEdit = (form: TrialForm) => TrialForm;

/** A chart click as a filter, and for search-backed facets the form change that applies (and undoes) it. */
export function trialChartFilter(selection: ChartSelection): { filter: TableFilter; apply?: SearchEdit; undo?: SearchEdit } | null {
  const { facet, value } = selection;
  const label = valueLabel(facet, value);
  const name = facetLabel("trialscout", facet);
  if (facet === "phase" || facet === "status") {
    return {
      filter: facetFilter(facet, name, value, label, "search"),
      apply: (form) => ({ ...form, [facet]: [value] }),
      undo: (form) => ({ ...form, [facet]: form[facet].filter((v) => v !== value) }),
    };
  }
  if (facet === "country") {
    return {
      filter: facetFilter(facet, name, value, label, "search"),
      apply: (form) => ({ ...form, location: value }),
      undo: (form) => ({ ...form, location: form.location === value ? "" : form.location }),
    };
  }
  if (!(facet in TRIAL_ROW_FIELDS)) return null;
  return { filter: facetFilter(facet, name, value, label, "rows") };
}
