/**
 * The results table of Tablizer and TrialScout: a selection column, the page's own columns (sort buttons
 * when the page sorts), and one column per AI column. Each page says only which columns it shows.
 */
import type { ReactNode } from "react";
import { AICell, AIColumnHeader } from "./AIColumnCell";
import type { AIColumns } from "./aiColumns";

export interface ResultColumn<Row, K extends string = string> {
  /** The column's key, and the field it sorts by when the table sorts. */
  key: K;
  label: string;
  cell: (row: Row) => ReactNode;
  /** The cells' class ("mono", "num"). */
  className?: string;
  /** The cell is the row's title: a button that opens the row in the detail panel. */
  opens?: boolean;
}

export interface ResultsSort<K extends string> {
  field: K | null;
  direction: "asc" | "desc";
}

/** What a page hands its results table: the rows to show and what the page keeps about them. */
export interface ResultRowsProps<Row> {
  rows: Row[];
  ai: AIColumns;
  selected: Set<string>;
  highlighted: string | null;
  /** Takes an update of the selection, as a state setter does. */
  onSelect: (update: (selected: Set<string>) => Set<string>) => void;
  onOpen: (id: string) => void;
}

interface Props<Row, K extends string> extends ResultRowsProps<Row> {
  columns: ReadonlyArray<ResultColumn<Row, K>>;
  rowId: (row: Row) => string;
  /** The row's element id (the page scrolls the opened row into view by it). */
  rowDomId: (id: string) => string;
  /** The selection checkbox's label for one row. */
  selectLabel: (id: string) => string;
  sort?: ResultsSort<K>;
  onSort?: (field: K) => void;
}

function toggled(selected: Set<string>, id: string): Set<string> {
  const next = new Set(selected);
  if (next.has(id)) next.delete(id);
  else next.add(id);
  return next;
}

export function ResultsTable<Row, K extends string>({
  rows,
  ai,
  selected,
  highlighted,
  onSelect,
  onOpen,
  columns,
  rowId,
  rowDomId,
  selectLabel,
  sort,
  onSort,
}: Props<Row, K>) {
  const allSelected = rows.length > 0 && rows.every((r) => selected.has(rowId(r)));
  const header = (c: ResultColumn<Row, K>) => {
    if (!sort || !onSort) {
      return (
        <th key={c.key} scope="col">
          {c.label}
        </th>
      );
    }
    const active = sort.field === c.key;
    return (
      <th key={c.key} scope="col" aria-sort={active ? (sort.direction === "asc" ? "ascending" : "descending") : "none"}>
        <button type="button" className="sort-button" data-testid={`sort-${c.key}`} onClick={() => onSort(c.key)}>
          {c.label}
          <span aria-hidden="true">{active ? (sort.direction === "asc" ? " ▲" : " ▼") : ""}</span>
        </button>
      </th>
    );
  };
  return (
    <div className="table-wrap">
      <table className="results" data-testid="results-table">
        <thead>
          <tr>
            <th scope="col" className="col-select">
              <input
                type="checkbox"
                aria-label="Select all rows"
                checked={allSelected}
                onChange={(e) => {
                  const all = e.target.checked;
                  onSelect(() => (all ? new Set(rows.map(rowId)) : new Set()));
                }}
              />
            </th>
            {columns.map(header)}
            {ai.columns.map((c) => (
              <th scope="col" key={c.id} className="ai-col" title={c.criteria}>
                <AIColumnHeader column={c} />
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => {
            const id = rowId(row);
            return (
              <tr
                key={id}
                id={rowDomId(id)}
                data-testid="result-row"
                data-id={id}
                className={highlighted === id ? "highlighted" : undefined}
                aria-selected={selected.has(id)}
              >
                <td className="col-select">
                  <input type="checkbox" aria-label={selectLabel(id)} checked={selected.has(id)} onChange={() => onSelect((s) => toggled(s, id))} />
                </td>
                {columns.map((c) => (
                  <td key={c.key} className={c.className}>
                    {c.opens ? (
                      <button type="button" className="link-button row-open" data-testid="row-open" onClick={() => onOpen(id)}>
                        {c.cell(row)}
                      </button>
                    ) : (
                      c.cell(row)
                    )}
                  </td>
                ))}
                {ai.columns.map((c) => (
                  <td key={c.id}>
                    <AICell ai={ai} column={c} rowId={id} />
                  </td>
                ))}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
