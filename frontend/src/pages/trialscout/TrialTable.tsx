import { phaseLabel, statusLabel } from "../../api/trialVocabulary";
import type { TrialSummary } from "../../api/types";
import { displayValue } from "../../cards/display";
import type { ExportColumn } from "../common/ExportMenu";
import { RecordDate } from "../common/RecordDate";
import { ResultsTable, type ResultColumn, type ResultRowsProps } from "../common/ResultsTable";
import type { TrialSort, TrialSortField } from "./trialscoutContext";

const COLUMNS: Array<ResultColumn<TrialSummary, TrialSortField>> = [
  { key: "nct_id", label: "NCT ID", className: "mono", cell: (t) => t.nct_id },
  { key: "title", label: "Title", opens: true, cell: (t) => t.title || "(untitled)" },
  { key: "phase", label: "Phase", cell: (t) => phaseLabel(t.phase) },
  { key: "status", label: "Status", cell: (t) => <RecordDate text={statusLabel(t.status)} record={t} /> },
  { key: "enrollment", label: "Enrollment", className: "num", cell: (t) => (typeof t.enrollment === "number" ? t.enrollment.toLocaleString("en-US") : "") },
  { key: "sponsor", label: "Sponsor", cell: (t) => displayValue(t.sponsor) },
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

interface Props extends ResultRowsProps<TrialSummary> {
  sort: TrialSort;
  onSort: (field: TrialSortField) => void;
  /** Columns the page adds after its own (the patient screening's fit). */
  extraColumns?: ReadonlyArray<ResultColumn<TrialSummary, TrialSortField>>;
}

export function TrialTable({ extraColumns, ...props }: Props) {
  return <ResultsTable {...props} columns={extraColumns?.length ? [...COLUMNS, ...extraColumns] : COLUMNS} rowId={(t) => t.nct_id} rowDomId={trialRowId} selectLabel={(id) => `Select ${id}`} />;
}
