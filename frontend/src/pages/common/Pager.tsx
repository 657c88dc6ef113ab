/**
 * Prev/next paging with "Page 2 of 14" ("Page 2" while the total is unknown). Both buttons wait while a
 * page loads.
 */
export function Pager({
  page,
  total,
  pageSize,
  hasNext,
  loading,
  onPrev,
  onNext,
}: {
  page: number;
  /** The matches in all pages, or null when the source does not say. */
  total: number | null;
  pageSize: number;
  hasNext: boolean;
  loading: boolean;
  onPrev: () => void;
  onNext: () => void;
}) {
  const label = `Page ${page}${total ? ` of ${Math.ceil(total / pageSize).toLocaleString("en-US")}` : ""}`;
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" data-testid="page-prev" disabled={page <= 1 || loading} onClick={onPrev}>
        ← Prev
      </button>
      <span data-testid="page-label">{label}</span>
      <button type="button" data-testid="page-next" disabled={!hasNext || loading} onClick={onNext}>
        Next →
      </button>
    </nav>
  );
}
