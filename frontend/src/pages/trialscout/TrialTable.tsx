import { phaseLabel, statusLabel } from "../../api/trialVocabulary";
import type { TrialSummary } from "../../api/types";
import { displayValue } from "../../cards/display";
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

/** The table row's element id, which opening a trial scrolls into view. */
export const trialRowId = (nctId: string) => `row-nct-${nctId}`;

interface Props extends ResultRowsProps<TrialSummary> {
  sort: TrialSort;
  onSort: (field: TrialSortField) => void;
}

export function TrialTable(props: Props) {
  return <ResultsTable {...props} columns={COLUMNS} rowId={(t) => t.nct_id} rowDomId={trialRowId} selectLabel={(id) => `Select ${id}`} />;
}
