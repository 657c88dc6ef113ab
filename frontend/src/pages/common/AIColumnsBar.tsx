/** The AI column bar above a results table: the columns with their filters and counts, and the form to add one. */
import { useState, type FormEvent } from "react";
import { savedAIColumns, type AIColumns, type SavedAIColumn } from "./aiColumns";
import { columnCounts, type AIColumn, type AIColumnType, type AIFilter } from "./aiColumnState";

const FILTERS: Record<AIColumnType, Array<[AIFilter | "all", string]>> = {
  boolean: [
    ["all", "All"],
    ["yes", "Yes only"],
    ["no", "No only"],
    ["conditional", "Conditional"],
    ["needs_review", "Needs review"],
    ["unknown", "Unknown"],
  ],
  text: [
    ["all", "All"],
    ["answered", "Has answer"],
  ],
};

const COUNT_LABELS: Array<[string, string]> = [
  ["yes", "Yes"],
  ["no", "No"],
  ["conditional", "Conditional"],
  ["needs_review", "Needs review"],
  ["answered", "Answered"],
  ["unknown", "Unknown"],
  ["error", "Errors"],
  ["pending", "Evaluating"],
];

/** "Yes 4 · No 9 · Unknown 12" (qualified answers, errors and rows still evaluating only when there are some). */
export function countsText(column: AIColumn): string {
  const counts = columnCounts(column);
  return COUNT_LABELS.filter(([key]) => key in counts && (counts[key] > 0 || !["conditional", "needs_review", "error", "pending"].includes(key)))
    .map(([key, label]) => `${label} ${counts[key]}`)
    .join(" · ");
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

/**
 * The AI column bar above a results table: each column with its filter, counts and remove; add by hand.
 * `visible`/`loaded` say how many loaded rows the filters keep.
 */
export function AIColumnsBar({ ai, visible, loaded }: { ai: AIColumns; visible?: number; loaded?: number }) {
  const [adding, setAdding] = useState(false);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [removed, setRemoved] = useState<SavedAIColumn | null>(null);
  const anyFilter = ai.columns.some((c) => c.filter);
  return (
    <section className="ai-columns" aria-label="AI columns" data-testid="ai-columns">
      <span className="label">AI columns</span>
      {ai.columns.length === 0 && <span className="muted small">none</span>}
      {ai.columns.map((c) => (
        <span key={c.id} className="ai-column-chip" data-testid="ai-column-chip" data-name={c.name} title={c.criteria}>
          <strong>{c.name}</strong> <span className="muted small">{c.type === "boolean" ? "Yes/No" : "Text"}</span>
          <select
            className="ai-filter"
            data-testid="ai-column-filter"
            aria-label={`Filter rows by ${c.name}`}
            value={c.filter ?? "all"}
            onChange={(e) => ai.setFilter(c.id, e.target.value === "all" ? null : (e.target.value as AIFilter))}
          >
            {FILTERS[c.type].map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
          {c.run.total > 0 && (
            <span className="muted small" data-testid="ai-column-counts" aria-live="polite">
              {countsText(c)}
            </span>
          )}
          {c.run.status === "failed" && (
            <>
              <span className="error-text small" role="alert" data-testid="ai-column-error">
                {c.run.error?.message ?? "The column could not be evaluated."}
              </span>
              <button type="button" className="small-button" data-testid="ai-column-retry" onClick={() => ai.retry(c.id)}>
                Retry
              </button>
            </>
          )}
          {confirming === c.id ? (
            <span className="small" data-testid="ai-column-confirm">
              Remove “{c.name}”?{" "}
              <button type="button" data-testid="ai-column-remove-confirm" onClick={() => {
                setConfirming(null);
                setRemoved(savedAIColumns([c])[0]);
                ai.remove(c.id);
              }}>Remove</button>{" "}
              <button type="button" className="link-button" onClick={() => setConfirming(null)}>Keep</button>
            </span>
          ) : (
            <button type="button" className="icon-button" aria-label={`Remove column ${c.name}`} data-testid="ai-column-remove" onClick={() => setConfirming(c.id)}>
              ×
            </button>
          )}
        </span>
      ))}
      {removed && !ai.columns.some((c) => c.name === removed.name) && (
        <span className="small" role="status" data-testid="ai-column-removed">
          Removed “{removed.name}”.{" "}
          <button type="button" className="link-button" data-testid="ai-column-undo-remove" onClick={() => {
            ai.restore(removed);
            setRemoved(null);
          }}>Undo</button>
        </span>
      )}
      {!adding && (
        <button type="button" data-testid="ai-column-add" onClick={() => setAdding(true)}>
          + Add AI column
        </button>
      )}
      {anyFilter && loaded != null && visible != null && (
        <span className="muted small" data-testid="ai-filter-summary">
          Filters show {visible} of {loaded} loaded rows
        </span>
      )}
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
