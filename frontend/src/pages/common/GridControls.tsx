/**
 * The controls around the results grid: the column chooser, the selection bar ("3 selected · Report ·
 * Export · Ask about these · Clear") and the sections that fold to one line (the search form).
 */
import { useRef, useState, type ReactNode } from "react";
import { useDismissable } from "../../useDismissable";
import { selectionLabel, type GridColumn } from "./gridModel";

export function ColumnChooser<Row>({ columns, hidden, onChange }: {
  columns: ReadonlyArray<GridColumn<Row>>;
  hidden: ReadonlySet<string>;
  onChange: (hidden: Set<string>) => void;
}) {
  const ref = useRef<HTMLDetailsElement>(null);
  useDismissable(ref);
  const shown = columns.filter((c) => c.required || !hidden.has(c.id)).length;
  return (
    <details className="column-chooser" data-testid="column-chooser" ref={ref}>
      <summary>Columns ({shown}/{columns.length})</summary>
      <fieldset className="column-chooser-panel">
        <legend className="small muted">Show columns</legend>
        {columns.map((c) => (
          <label key={c.id} className="column-choice">
            <input
              type="checkbox"
              data-testid={`show-${c.id}`}
              checked={c.required || !hidden.has(c.id)}
              disabled={c.required}
              onChange={(e) => {
                const next = new Set(hidden);
                if (e.target.checked) next.delete(c.id);
                else next.add(c.id);
                onChange(next);
              }}
            />
            {c.label}
          </label>
        ))}
      </fieldset>
    </details>
  );
}

/** Opens the page's Export menu (the report lives there), with the report's title field or CSV focused. */
function openExport(from: HTMLElement, part: "report" | "export") {
  const menu = from.closest("[data-testid$='-page']")?.querySelector<HTMLDetailsElement>("[data-testid='export-menu']");
  if (!menu) return;
  menu.open = true;
  menu.scrollIntoView({ block: "nearest" });
  menu.querySelector<HTMLElement>(part === "report" ? "[data-testid='report-title']" : "[data-testid='export-csv']")?.focus();
}

export function SelectionBar({ count, one, onAsk, onClear }: {
  count: number;
  /** "trial" / "article" */
  one: string;
  onAsk: () => void;
  onClear: () => void;
}) {
  if (count === 0) return null;
  return (
    <div className="selection-bar" role="toolbar" aria-label="Selected rows" data-testid="selection-bar">
      <strong data-testid="selection-count">{selectionLabel(count)}</strong>
      <button type="button" data-testid="selection-report" onClick={(e) => openExport(e.currentTarget, "report")}>
        Report
      </button>
      <button type="button" data-testid="selection-export" onClick={(e) => openExport(e.currentTarget, "export")}>
        Export
      </button>
      <button type="button" data-testid="selection-ask" onClick={onAsk} title={`Ask the assistant about the selected ${one}s`}>
        Ask about these
      </button>
      <button type="button" className="link-button" data-testid="selection-clear" onClick={onClear}>
        Clear
      </button>
    </div>
  );
}

/** A section that folds to one line: its toggle and, folded, a summary of what it holds (the search form, the
 * patient panel). Folded, its content stays mounted (hidden), so what was typed in it is kept. */
export function Foldable({ className, label, labelledBy, testId, heading, collapsed, onToggle, toggleText, toggleTestId,
                           summary, summaryFirst = false, children }: {
  className: string;
  label?: string;
  labelledBy?: string;
  testId?: string;
  /** Shown on the line in both states, before everything else. */
  heading?: ReactNode;
  collapsed: boolean;
  onToggle: (collapsed: boolean) => void;
  /** The toggle's text: [folded, open]. */
  toggleText: [string, string];
  toggleTestId: string;
  summary?: ReactNode;
  summaryFirst?: boolean;
  children: ReactNode;
}) {
  const [id] = useState(() => `fold-${Math.random().toString(36).slice(2, 8)}`);
  const toggle = (
    <button type="button" className="link-button" aria-expanded={!collapsed} aria-controls={id} data-testid={toggleTestId}
            onClick={() => onToggle(!collapsed)}>
      {collapsed ? toggleText[0] : toggleText[1]}
    </button>
  );
  const shown = collapsed ? summary : null;
  return (
    <section className={collapsed ? `${className} collapsed` : className} aria-label={label} aria-labelledby={labelledBy}
             data-testid={testId}>
      <div className="fold-line">
        {heading}
        {summaryFirst ? <>{shown}{toggle}</> : <>{toggle}{shown}</>}
      </div>
      <div id={id} hidden={collapsed} className="fold-body">
        {children}
      </div>
    </section>
  );
}

/** The search form, folded to one line ("melanoma · Phase 3 · Recruiting") once it has filled the table. */
export function CollapsibleSearch({ summary, collapsed, onToggle, children }: {
  summary: string;
  collapsed: boolean;
  onToggle: (collapsed: boolean) => void;
  children: ReactNode;
}) {
  return (
    <Foldable className="collapsible-search" label="Search" collapsed={collapsed} onToggle={onToggle}
              toggleText={["Edit search ▸", "Hide search ▾"]} toggleTestId="search-toggle"
              summary={<span className="search-summary" data-testid="search-summary">{summary || "No search yet"}</span>}>
      {children}
    </Foldable>
  );
}
