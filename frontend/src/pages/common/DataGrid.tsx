/**
 * The results grid of Tablizer and TrialScout, on TanStack Table (headless: it keeps the column model and
 * visibility; the markup and styles are ours). Every column is a `GridColumn` (gridModel.ts): the page's
 * own, its AI columns, or a column another feature adds. The page owns sort, hidden columns and selection
 * (they are saved in its view) and sorts the rows itself with `sortRows`, so exports and the assistant see
 * the order the grid shows. Keyboard: ↑/↓ (j/k) move between rows, Home/End, Enter opens, Space selects.
 * Below 768 px the rows are cards (styles.css), each cell labelled by its column.
 */
import { getCoreRowModel, useReactTable, type ColumnDef, type VisibilityState } from "@tanstack/react-table";
import { useMemo, useRef, type KeyboardEvent, type MouseEvent } from "react";
import { AICell, AIColumnHeader } from "./AIColumnCell";
import type { AIColumns } from "./aiColumns";
import { aiColumnId, aiSortValue, type GridColumn, type GridSort } from "./gridModel";

/** The page's columns followed by one per AI column (sortable by verdict). */
export function withAIColumns<Row>(columns: ReadonlyArray<GridColumn<Row>>, ai: AIColumns, rowId: (row: Row) => string): Array<GridColumn<Row>> {
  return [
    ...columns,
    ...ai.columns.map((c): GridColumn<Row> => ({
      id: aiColumnId(c),
      label: c.name,
      className: "ai-col",
      cell: (row) => <AICell ai={ai} column={c} rowId={rowId(row)} />,
      value: (row) => aiSortValue(c, rowId(row)),
    })),
  ];
}

export interface DataGridProps<Row> {
  rows: readonly Row[];
  columns: ReadonlyArray<GridColumn<Row>>;
  ai: AIColumns;
  rowId: (row: Row) => string;
  /** The row's element id (the page scrolls the opened row into view by it). */
  rowDomId: (id: string) => string;
  /** Where the row's title links to (a new tab opens the page with the row open). */
  rowHref: (id: string) => string;
  selectLabel: (id: string) => string;
  hidden: ReadonlySet<string>;
  sort: GridSort;
  onSort: (field: string) => void;
  selected: ReadonlySet<string>;
  onSelect: (update: (selected: Set<string>) => Set<string>) => void;
  highlighted: string | null;
  onOpen: (id: string) => void;
}

function toggled(selected: Set<string>, id: string): Set<string> {
  const next = new Set(selected);
  if (next.has(id)) next.delete(id);
  else next.add(id);
  return next;
}

const plainClick = (e: MouseEvent) => e.button === 0 && !e.metaKey && !e.ctrlKey && !e.shiftKey && !e.altKey;

export function DataGrid<Row>(props: DataGridProps<Row>) {
  const { rows, columns, ai, rowId, rowDomId, rowHref, selectLabel, hidden, sort, onSort, selected, onSelect, highlighted, onOpen } = props;
  const bodyRef = useRef<HTMLTableSectionElement>(null);
  const aiById = useMemo(() => new Map(ai.columns.map((c) => [aiColumnId(c), c])), [ai.columns]);

  const defs = useMemo<Array<ColumnDef<Row>>>(
    () =>
      columns.map((c) => ({
        id: c.id,
        header: c.label,
        accessorFn: (row: Row) => c.value(row),
        meta: c,
      })),
    [columns],
  );
  const columnVisibility = useMemo<VisibilityState>(
    () => Object.fromEntries(columns.map((c) => [c.id, Boolean(c.required) || !hidden.has(c.id)])),
    [columns, hidden],
  );
  const table = useReactTable({
    data: rows as Row[],
    columns: defs,
    state: { columnVisibility },
    getCoreRowModel: getCoreRowModel(),
    getRowId: (row) => rowId(row),
    manualSorting: true,
  });

  // Cells are drawn here, not through flexRender: it mounts a column's cell as a component, and the column
  // definitions are new on each render, so every cell (and the focus in it) would be replaced each time.
  const renderCell = (c: GridColumn<Row>, row: Row) => {
    if (!c.title) return c.cell(row);
    const id = rowId(row);
    return (
      <a
        className="row-open"
        data-testid="row-open"
        href={rowHref(id)}
        target="_blank"
        rel="noopener"
        onClick={(e) => {
          if (!plainClick(e)) return; // a modified or middle click opens the new tab as links do
          e.preventDefault();
          onOpen(id);
        }}
      >
        {c.cell(row)}
      </a>
    );
  };

  const allSelected = rows.length > 0 && rows.every((r) => selected.has(rowId(r)));

  const focusRow = (index: number) => {
    const trs = bodyRef.current?.querySelectorAll<HTMLTableRowElement>("tr[data-testid='result-row']");
    if (!trs?.length) return;
    trs[Math.max(0, Math.min(trs.length - 1, index))].focus();
  };
  const onRowKey = (e: KeyboardEvent<HTMLTableRowElement>, index: number, id: string) => {
    if (e.target !== e.currentTarget) return; // keys inside a cell's own controls are theirs
    const moves: Record<string, number> = { ArrowDown: index + 1, j: index + 1, ArrowUp: index - 1, k: index - 1, Home: 0, End: rows.length - 1 };
    if (e.key in moves) {
      e.preventDefault();
      focusRow(moves[e.key]);
    } else if (e.key === "Enter") {
      e.preventDefault();
      onOpen(id);
    } else if (e.key === " ") {
      e.preventDefault();
      onSelect((s) => toggled(s, id));
    }
  };

  return (
    <div className="grid-wrap" data-testid="grid-wrap">
      <table className="results data-grid" data-testid="results-table" aria-rowcount={rows.length + 1}>
        <thead>
          {table.getHeaderGroups().map((group) => (
            <tr key={group.id}>
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
              {group.headers.map((header) => {
                const c = header.column.columnDef.meta as GridColumn<Row>;
                const active = sort.field === c.id;
                const aiColumn = aiById.get(c.id);
                return (
                  <th key={header.id} scope="col" className={aiColumn ? "ai-col" : undefined} title={aiColumn?.criteria}
                      aria-sort={active ? (sort.direction === "asc" ? "ascending" : "descending") : "none"}>
                    <span className="th-inner">
                      <button type="button" className="sort-button" data-testid={`sort-${c.id}`} onClick={() => onSort(c.id)}>
                        {aiColumn ? <AIColumnHeader column={aiColumn} /> : c.label}
                        <span aria-hidden="true">{active ? (sort.direction === "asc" ? " ▲" : " ▼") : ""}</span>
                      </button>
                    </span>
                  </th>
                );
              })}
            </tr>
          ))}
        </thead>
        <tbody ref={bodyRef}>
          {table.getRowModel().rows.map((row, index) => {
            const id = row.id;
            return (
              <tr
                key={id}
                id={rowDomId(id)}
                data-testid="result-row"
                data-id={id}
                tabIndex={index === 0 ? 0 : -1}
                className={highlighted === id ? "highlighted" : undefined}
                aria-selected={selected.has(id)}
                onKeyDown={(e) => onRowKey(e, index, id)}
                onFocus={(e) => {
                  // One row in the tab order at a time (roving focus): the one last focused.
                  bodyRef.current?.querySelectorAll("tr[tabindex='0']").forEach((tr) => tr !== e.currentTarget && tr.setAttribute("tabindex", "-1"));
                  e.currentTarget.tabIndex = 0;
                }}
              >
                <td className="col-select">
                  <input type="checkbox" aria-label={selectLabel(id)} checked={selected.has(id)} onChange={() => onSelect((s) => toggled(s, id))} />
                </td>
                {row.getVisibleCells().map((cell) => {
                  const c = cell.column.columnDef.meta as GridColumn<Row>;
                  return (
                    <td key={cell.id} className={[c.className, c.title ? "col-title" : ""].filter(Boolean).join(" ") || undefined} data-label={c.label}>
                      {renderCell(c, row.original)}
                    </td>
                  );
                })}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
