import { useState } from "react";
import type { CompareGroup, Comparison, Snapshot } from "./tablizerContext";

interface Props {
  snapshots: Snapshot[];
  selectedId: string | null;
  compare: [string, string] | null;
  comparison: Comparison | null;
  compareGroup: CompareGroup;
  canSave: boolean;
  onSave: () => void;
  onSelect: (id: string | null) => void;
  onRelabel: (id: string, label: string) => void;
  onCompare: (pair: [string, string] | null) => void;
  onCompareGroup: (group: CompareGroup) => void;
}

const GROUPS: Array<[CompareGroup, string]> = [
  ["onlyA", "Only in A"],
  ["onlyB", "Only in B"],
  ["both", "In both"],
];

/** Snapshots of result sets: save, view one, relabel, and compare two. */
export function SnapshotBar(p: Props) {
  const [editing, setEditing] = useState<string | null>(null);
  const [draft, setDraft] = useState("");

  return (
    <section className="snapshots" aria-label="Snapshots" data-testid="snapshots">
      <div className="row-gap wrap">
        <span className="label">Snapshots</span>
        <button type="button" data-testid="snapshot-save" disabled={!p.canSave} onClick={p.onSave}>
          Save snapshot
        </button>
        {p.snapshots.length === 0 && <span className="muted small">Save the current results to compare searches.</span>}
        {p.snapshots.map((s) =>
          editing === s.id ? (
            <form
              key={s.id}
              className="row-gap"
              onSubmit={(e) => {
                e.preventDefault();
                if (draft.trim()) p.onRelabel(s.id, draft.trim());
                setEditing(null);
              }}
            >
              <label className="sr-only" htmlFor={`snapshot-label-${s.id}`}>
                Snapshot label
              </label>
              <input
                id={`snapshot-label-${s.id}`}
                data-testid="snapshot-label-input"
                value={draft}
                autoFocus
                onChange={(e) => setDraft(e.target.value)}
                onKeyDown={(e) => e.key === "Escape" && setEditing(null)}
              />
              <button type="submit">Save</button>
            </form>
          ) : (
            <span key={s.id} className={p.selectedId === s.id ? "snapshot-chip active" : "snapshot-chip"} data-testid="snapshot-chip">
              <button
                type="button"
                className="link-button"
                aria-pressed={p.selectedId === s.id}
                title={`${s.query} (${s.articles.length} articles)`}
                onClick={() => p.onSelect(p.selectedId === s.id ? null : s.id)}
              >
                {s.label} <span className="muted small">({s.articles.length})</span>
              </button>
              <button
                type="button"
                className="icon-button"
                aria-label={`Rename snapshot ${s.label}`}
                onClick={() => {
                  setDraft(s.label);
                  setEditing(s.id);
                }}
              >
                ✎
              </button>
            </span>
          ),
        )}
        {p.selectedId && (
          <button type="button" data-testid="snapshot-live" onClick={() => p.onSelect(null)}>
            Back to live results
          </button>
        )}
      </div>
      {p.snapshots.length >= 2 && (
        <div className="row-gap wrap compare-controls">
          <label className="inline">
            <input
              type="checkbox"
              data-testid="compare-toggle"
              checked={p.compare !== null}
              onChange={(e) => p.onCompare(e.target.checked ? [p.snapshots[0].id, p.snapshots[1].id] : null)}
            />
            Compare
          </label>
          {p.compare && (
            <>
              {(["A", "B"] as const).map((side, i) => (
                <label key={side} className="inline">
                  {side}
                  <select
                    data-testid={`compare-${side.toLowerCase()}`}
                    value={p.compare![i]}
                    onChange={(e) => {
                      const pair: [string, string] = [...p.compare!];
                      pair[i] = e.target.value;
                      p.onCompare(pair);
                    }}
                  >
                    {p.snapshots.map((s) => (
                      <option key={s.id} value={s.id}>
                        {s.label}
                      </option>
                    ))}
                  </select>
                </label>
              ))}
              {p.comparison && (
                <div className="segmented" role="group" aria-label="Comparison group">
                  {GROUPS.map(([group, label]) => (
                    <button
                      key={group}
                      type="button"
                      aria-pressed={p.compareGroup === group}
                      data-testid={`compare-group-${group}`}
                      onClick={() => p.onCompareGroup(group)}
                    >
                      {label} ({p.comparison![group].length})
                    </button>
                  ))}
                </div>
              )}
            </>
          )}
        </div>
      )}
    </section>
  );
}
