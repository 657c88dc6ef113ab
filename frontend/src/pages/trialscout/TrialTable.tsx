import { phaseLabel, statusLabel } from "../../api/trialVocabulary";
import type { TrialSummary } from "../../api/types";
import { displayValue } from "../../cards/display";
import { StaleStatus } from "../../cards/StaleStatus";
import type { ExportColumn } from "../common/ExportMenu";
import type { GridColumn } from "../common/gridModel";
import { RecordDate } from "../common/RecordDate";
import type { Facet } from "../common/selectionReport";

const list = (values: string[] | undefined) => (values ?? []).join(", ");
const PHASE_ORDER = ["EARLY_PHASE1", "PHASE1", "PHASE2", "PHASE3", "PHASE4", "NA"];

/** TrialScout's grid columns; another feature's column (e.g. a screening fit) is one more entry. */
export const TRIAL_COLUMNS: Array<GridColumn<TrialSummary>> = [
  { id: "nct_id", label: "NCT ID", className: "mono", required: true, cell: (t) => t.nct_id, value: (t) => t.nct_id },
  { id: "title", label: "Title", title: true, cell: (t) => t.title || "(untitled)", value: (t) => t.title },
  { id: "phase", label: "Phase", cell: (t) => phaseLabel(t.phase),
    value: (t) => (t.phase?.length ? Math.max(...t.phase.map((p) => PHASE_ORDER.indexOf(p))) : undefined) },
  { id: "status", label: "Status", cell: (t) => <><RecordDate text={statusLabel(t.status)} record={t} /><StaleStatus record={t} /></>, value: (t) => statusLabel(t.status) },
  { id: "conditions", label: "Conditions", hiddenByDefault: true, cell: (t) => list(t.conditions), value: (t) => list(t.conditions) },
  { id: "interventions", label: "Interventions", hiddenByDefault: true, cell: (t) => list(t.interventions), value: (t) => list(t.interventions) },
  { id: "enrollment", label: "Enrollment", className: "num",
    cell: (t) => (typeof t.enrollment === "number" ? t.enrollment.toLocaleString("en-US") : ""), value: (t) => t.enrollment },
  { id: "sponsor", label: "Sponsor", cell: (t) => displayValue(t.sponsor), value: (t) => t.sponsor },
  { id: "start_date", label: "Start date", hiddenByDefault: true, cell: (t) => t.start_date ?? "", value: (t) => t.start_date },
  { id: "completion_date", label: "Completion date", hiddenByDefault: true, cell: (t) => t.completion_date ?? "", value: (t) => t.completion_date },
  { id: "locations_count", label: "Locations", className: "num", hiddenByDefault: true,
    cell: (t) => (typeof t.locations_count === "number" ? String(t.locations_count) : ""), value: (t) => t.locations_count },
];

/** The table as text for exports: the shown columns, with labels instead of codes, plus what a reader needs. */
export const TRIAL_EXPORT: Array<ExportColumn<TrialSummary>> = [
  { key: "nct_id", label: "NCT ID", text: (t) => t.nct_id },
  { key: "title", label: "Title", text: (t) => t.title ?? "" },
  { key: "phase", label: "Phase", text: (t) => phaseLabel(t.phase) },
  { key: "status", label: "Status", text: (t) => statusLabel(t.status) },
  { key: "conditions", label: "Conditions", text: (t) => t.conditions ?? [] },
  { key: "interventions", label: "Interventions", text: (t) => t.interventions ?? [] },
  { key: "enrollment", label: "Enrollment", text: (t) => (typeof t.enrollment === "number" ? t.enrollment : null) },
  { key: "sponsor", label: "Sponsor", text: (t) => displayValue(t.sponsor) },
  { key: "start_date", label: "Start date", text: (t) => t.start_date ?? null },
  { key: "snapshot_date", label: "Record as of", text: (t) => t.snapshot_date ?? null },
];

/** The table row's element id, which opening a trial scrolls into view. */
export const trialRowId = (nctId: string) => `row-nct-${nctId}`;
/** The row's link: TrialScout with the trial open (what a new tab shows). */
export const trialHref = (nctId: string) => `/trialscout?open=${encodeURIComponent(nctId)}`;

/** What a report counts over the selected trials. */
export const TRIAL_FACETS: Array<Facet<TrialSummary>> = [
  { label: "Phase", chart: "phase", values: (t) => (t.phase?.length ? t.phase.map((p) => phaseLabel([p])) : []) },
  { label: "Status", chart: "status", values: (t) => (t.status ? [statusLabel(t.status)] : []) },
  { label: "Start year", chart: "start_year", values: (t) => (t.start_date ? [t.start_date.slice(0, 4)] : []) },
  { label: "Sponsor", chart: "sponsor", values: (t) => (t.sponsor ? [t.sponsor] : []) },
];
