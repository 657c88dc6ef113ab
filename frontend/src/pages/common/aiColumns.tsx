/**
 * AI columns, shared by Tablizer and TrialScout: a criteria prompt evaluated
 * per row (Yes/No or Text). Evaluation is not wired yet, so every cell shows a
 * visible "not evaluated" state and filters keep unevaluated rows.
 */
import { useCallback, useRef, useState, type FormEvent } from "react";

export type AIColumnType = "boolean" | "text";

export interface AIColumn {
  id: string;
  name: string;
  criteria: string;
  type: AIColumnType;
  filterActive: boolean;
  /** Row id → evaluated value; empty until evaluation exists. */
  values: Record<string, boolean | string | null>;
}

export function useAIColumns() {
  const [columns, setColumns] = useState<AIColumn[]>([]);
  const next = useRef(1);

  const add = useCallback((name: string, criteria: string, type: AIColumnType) => {
    const column: AIColumn = { id: `col-${next.current++}`, name: name.trim(), criteria: criteria.trim(), type, filterActive: false, values: {} };
    setColumns((cols) => [...cols, column]);
  }, []);
  const remove = useCallback((id: string) => setColumns((cols) => cols.filter((c) => c.id !== id)), []);
  const toggleFilter = useCallback(
    (id: string) => setColumns((cols) => cols.map((c) => (c.id === id ? { ...c, filterActive: !c.filterActive } : c))),
    [],
  );
  return { columns, add, remove, toggleFilter };
}

/** The context shape both specs use for AI columns. */
export function aiColumnsContext(columns: AIColumn[]) {
  return columns.map((c) => ({ name: c.name, type: c.type, criteria: c.criteria, filter_active: c.filterActive }));
}

/** Active Yes/No filters hide rows evaluated "No"; rows not yet evaluated stay visible. */
export function applyAIFilters<T>(rows: T[], columns: AIColumn[], idOf: (row: T) => string): T[] {
  const active = columns.filter((c) => c.filterActive && c.type === "boolean");
  if (active.length === 0) return rows;
  return rows.filter((row) => active.every((c) => c.values[idOf(row)] !== false));
}

/** Coerce a suggestion's data into a column, refusing ones without a name or criteria. */
export function columnFromPayload(data: Record<string, unknown>): { name: string; criteria: string; type: AIColumnType } {
  const name = typeof data.name === "string" ? data.name.trim() : "";
  const criteria = typeof data.criteria === "string" ? data.criteria.trim() : "";
  if (!name || !criteria) throw new Error("This column suggestion has no name or criteria.");
  return { name, criteria, type: data.type === "boolean" ? "boolean" : "text" };
}

export function AICell({ column, rowId }: { column: AIColumn; rowId: string }) {
  const value = column.values[rowId];
  if (value === undefined || value === null) {
    return (
      <span className="ai-cell not-evaluated" data-testid="ai-cell" title="This column has not been evaluated yet">
        not evaluated
      </span>
    );
  }
  if (typeof value === "boolean") return <span className={`ai-cell ai-${value ? "yes" : "no"}`} data-testid="ai-cell">{value ? "Yes" : "No"}</span>;
  return <span className="ai-cell" data-testid="ai-cell">{value}</span>;
}

function AddColumnForm({ onAdd, onCancel }: { onAdd: (name: string, criteria: string, type: AIColumnType) => void; onCancel: () => void }) {
  const [name, setName] = useState("");
  const [criteria, setCriteria] = useState("");
  const [type, setType] = useState<AIColumnType>("boolean");
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!name.trim() || !criteria.trim()) return;
    onAdd(name, criteria, type);
  };
  return (
    <form className="add-column-form" onSubmit={submit} data-testid="ai-column-form">
      <label>
        Column name
        <input data-testid="ai-column-name" required value={name} autoFocus onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        Criteria
        <textarea data-testid="ai-column-criteria" required rows={2} value={criteria} onChange={(e) => setCriteria(e.target.value)} />
      </label>
      <label>
        Type
        <select data-testid="ai-column-type" value={type} onChange={(e) => setType(e.target.value as AIColumnType)}>
          <option value="boolean">Yes/No</option>
          <option value="text">Text</option>
        </select>
      </label>
      <div className="row-gap">
        <button type="submit" className="primary" data-testid="ai-column-add-submit">
          Add column
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** The AI column bar above a results table: list, filter toggles, remove, add by hand. */
export function AIColumnsBar({ ai }: { ai: ReturnType<typeof useAIColumns> }) {
  const [adding, setAdding] = useState(false);
  const anyFilter = ai.columns.some((c) => c.filterActive && c.type === "boolean");
  return (
    <section className="ai-columns" aria-label="AI columns" data-testid="ai-columns">
      <span className="label">AI columns</span>
      {ai.columns.length === 0 && <span className="muted small">none</span>}
      {ai.columns.map((c) => (
        <span key={c.id} className="ai-column-chip" data-testid="ai-column-chip" title={c.criteria}>
          <strong>{c.name}</strong> <span className="muted small">{c.type === "boolean" ? "Yes/No" : "Text"}</span>
          {c.type === "boolean" && (
            <label className="filter-toggle">
              <input type="checkbox" checked={c.filterActive} onChange={() => ai.toggleFilter(c.id)} data-testid="ai-column-filter" />
              filter
            </label>
          )}
          <button type="button" className="icon-button" aria-label={`Remove column ${c.name}`} data-testid="ai-column-remove" onClick={() => ai.remove(c.id)}>
            ×
          </button>
        </span>
      ))}
      {!adding && (
        <button type="button" data-testid="ai-column-add" onClick={() => setAdding(true)}>
          + Add AI column
        </button>
      )}
      {anyFilter && <span className="muted small">Filters apply once columns are evaluated.</span>}
      {adding && (
        <AddColumnForm
          onAdd={(name, criteria, type) => {
            ai.add(name, criteria, type);
            setAdding(false);
          }}
          onCancel={() => setAdding(false)}
        />
      )}
    </section>
  );
}
