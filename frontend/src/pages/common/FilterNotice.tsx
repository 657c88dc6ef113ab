/** When AI column filters hide loaded rows: how many they hide, and Clear (also where an empty table would be). */
import type { AIColumns } from "./aiColumns";
import { plural } from "./counts";

export function FilterNotice({ ai, visible, loaded, one }: { ai: AIColumns; visible: number; loaded: number; one: string }) {
  const filtered = ai.columns.filter((c) => c.filter);
  if (filtered.length === 0 || loaded === 0) return null;
  const clear = () => filtered.forEach((c) => ai.setFilter(c.id, null));
  return (
    <p className={visible === 0 ? "filter-notice filter-empty" : "filter-notice small"} data-testid="filter-notice" role="status">
      {visible === 0
        ? `None of the ${plural(loaded, one)} loaded match the AI column ${filtered.length === 1 ? "filter" : "filters"}.`
        : `AI column ${filtered.length === 1 ? "filter hides" : "filters hide"} ${plural(loaded - visible, one)}.`}{" "}
      <button type="button" className="link-button" data-testid="filter-clear" onClick={clear}>
        Clear {filtered.length === 1 ? "filter" : "filters"}
      </button>
    </p>
  );
}
