import type { TableFilter } from "./tableFilters";

/** The table's active filters as chips; each one's × removes it (search-scoped ones re-run the search). */
export function FilterChips({ filters, onRemove, onClear }: {
  filters: readonly TableFilter[];
  onRemove: (filter: TableFilter) => void;
  onClear?: () => void;
}) {
  if (!filters.length) return null;
  return (
    <div className="filter-chips" role="group" aria-label="Table filters" data-testid="filter-chips">
      {filters.map((f) => (
        <span key={f.id} className={`filter-chip filter-chip-${f.scope}`} data-testid="filter-chip"
              title={f.scope === "search" ? "Applied to the search" : "Narrows the loaded rows"}>
          <span className="filter-chip-label">{f.label}</span>
          <button type="button" className="filter-chip-remove" aria-label={`Remove filter ${f.label}`}
                  data-testid="filter-chip-remove" onClick={() => onRemove(f)}>
            ×
          </button>
        </span>
      ))}
      {onClear && filters.length > 1 && (
        <button type="button" className="link-button" onClick={onClear}>
          Clear filters
        </button>
      )}
    </div>
  );
}
