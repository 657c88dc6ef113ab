/**
 * The grid block both results pages show once there are rows: the toolbar (column chooser, selection bar)
 * above the `DataGrid`. The page keeps owning the state; this only lays the three out the same way.
 */
import { DataGrid, type DataGridProps } from "./DataGrid";
import { ColumnChooser, SelectionBar } from "./GridControls";

export interface ResultsGridProps<Row> extends DataGridProps<Row> {
  /** "trial" / "article" */
  one: string;
  onHide: (hidden: Set<string>) => void;
  /** Ask the assistant about the selected rows. */
  onAsk: () => void;
}

export function ResultsGrid<Row>({ one, onHide, onAsk, ...grid }: ResultsGridProps<Row>) {
  if (grid.rows.length === 0) return null;
  return (
    <>
      <div className="grid-toolbar">
        <ColumnChooser columns={grid.columns} hidden={grid.hidden} onChange={onHide} />
        <SelectionBar count={grid.selected.size} one={one} onAsk={onAsk} onClear={() => grid.onSelect(() => new Set())} />
      </div>
      <DataGrid {...grid} />
    </>
  );
}
