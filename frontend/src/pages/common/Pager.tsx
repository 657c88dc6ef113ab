/** Prev/next paging with a position label. */
export function Pager({
  label,
  canPrev,
  canNext,
  onPrev,
  onNext,
}: {
  label: string;
  canPrev: boolean;
  canNext: boolean;
  onPrev: () => void;
  onNext: () => void;
}) {
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" data-testid="page-prev" disabled={!canPrev} onClick={onPrev}>
        ← Prev
      </button>
      <span data-testid="page-label">{label}</span>
      <button type="button" data-testid="page-next" disabled={!canNext} onClick={onNext}>
        Next →
      </button>
    </nav>
  );
}
