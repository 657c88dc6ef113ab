import { phaseLabel, statusLabel } from "../../api/trialVocabulary";
import type { TrialSummary } from "../../api/types";
import { displayValue } from "../../cards/display";
import { AICell, AIColumnHeader } from "../common/AIColumnCell";
import type { AIColumns } from "../common/aiColumns";
import type { TrialSort, TrialSortField } from "./trialscoutContext";

const COLUMNS: Array<[TrialSortField, string]> = [
  ["nct_id", "NCT ID"],
  ["title", "Title"],
  ["phase", "Phase"],
  ["status", "Status"],
  ["enrollment", "Enrollment"],
  ["sponsor", "Sponsor"],
];

interface Props {
  rows: TrialSummary[];
  ai: AIColumns;
  sort: TrialSort;
  selected: Set<string>;
  highlighted: string | null;
  onSort: (field: TrialSortField) => void;
  onToggle: (id: string) => void;
  onToggleAll: (select: boolean) => void;
  onOpen: (id: string) => void;
}

export function TrialTable({ rows, ai, sort, selected, highlighted, onSort, onToggle, onToggleAll, onOpen }: Props) {
  const allSelected = rows.length > 0 && rows.every((r) => selected.has(r.nct_id));
  return (
    <div className="table-wrap">
      <table className="results" data-testid="results-table">
        <thead>
          <tr>
            <th scope="col" className="col-select">
              <input type="checkbox" aria-label="Select all rows" checked={allSelected} onChange={(e) => onToggleAll(e.target.checked)} />
            </th>
            {COLUMNS.map(([field, label]) => {
              const active = sort.field === field;
              return (
                <th key={field} scope="col" aria-sort={active ? (sort.direction === "asc" ? "ascending" : "descending") : "none"}>
                  <button type="button" className="sort-button" data-testid={`sort-${field}`} onClick={() => onSort(field)}>
                    {label}
                    <span aria-hidden="true">{active ? (sort.direction === "asc" ? " ▲" : " ▼") : ""}</span>
                  </button>
                </th>
              );
            })}
            {ai.columns.map((c) => (
              <th scope="col" key={c.id} className="ai-col" title={c.criteria}>
                <AIColumnHeader column={c} />
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((t) => (
            <tr
              key={t.nct_id}
              id={`row-nct-${t.nct_id}`}
              data-testid="result-row"
              data-id={t.nct_id}
              className={highlighted === t.nct_id ? "highlighted" : undefined}
              aria-selected={selected.has(t.nct_id)}
            >
              <td className="col-select">
                <input type="checkbox" aria-label={`Select ${t.nct_id}`} checked={selected.has(t.nct_id)} onChange={() => onToggle(t.nct_id)} />
              </td>
              <td className="mono">{t.nct_id}</td>
              <td>
                <button type="button" className="link-button row-open" data-testid="row-open" onClick={() => onOpen(t.nct_id)}>
                  {t.title || "(untitled)"}
                </button>
              </td>
              <td>{phaseLabel(t.phase)}</td>
              <td>{statusLabel(t.status)}</td>
              <td className="num">{typeof t.enrollment === "number" ? t.enrollment.toLocaleString("en-US") : ""}</td>
              <td>{displayValue(t.sponsor)}</td>
              {ai.columns.map((c) => (
                <td key={c.id}>
                  <AICell ai={ai} column={c} rowId={t.nct_id} />
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
