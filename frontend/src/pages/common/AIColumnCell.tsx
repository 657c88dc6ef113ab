/** An AI column's parts inside the results table: the header with its progress, and one row's cell with its details popover. */
import { useEffect, useLayoutEffect, useRef, useState, type KeyboardEvent } from "react";
import { listen, removeAll } from "../../listen";
import type { AIColumns } from "./aiColumns";
import { cellCategory, type AICellState, type AIColumn, type EvidenceSection } from "./aiColumnState";

/** The column header: name, and the run's progress (done/total) with a bar while it runs. */
export function AIColumnHeader({ column }: { column: AIColumn }) {
  const { status, done, total, error } = column.run;
  return (
    <div className="ai-col-header" data-testid="ai-col-header" data-name={column.name}>
      <span className="ai-col-name">{column.name}</span>
      {total > 0 && (
        <span className="ai-progress" data-testid="ai-progress" data-status={status} data-done={done} data-total={total}>
          {status === "running" && (
            <progress max={total} value={done} aria-label={`${column.name}: ${done} of ${total} rows evaluated`} />
          )}
          <span className="small">
            {done}/{total}
          </span>
        </span>
      )}
      {status === "failed" && (
        <span className="error-text small" title={error?.message}>
          ⚠ stopped
        </span>
      )}
    </div>
  );
}

const CATEGORY_CLASS: Record<string, string> = {
  yes: "ai-yes",
  no: "ai-no",
  conditional: "ai-conditional",
  needs_review: "ai-needs-review",
  unknown: "ai-unknown",
  answered: "ai-answer",
};

const SECTION_LABEL: Record<NonNullable<EvidenceSection>, string> = {
  inclusion: "Inclusion",
  exclusion: "Exclusion",
  title: "Title",
  abstract: "Abstract",
  summary: "Summary",
  conditions: "Conditions",
  details: "Record details",
};

/** A quote's section as shown: the server located it in the record, or could not. */
export function sectionLabel(section: EvidenceSection | undefined): string {
  return section ? SECTION_LABEL[section] : "Not found in the record";
}

/** The quotes' sections, when the server placed them (a result cached before it did has none). */
function placed(cell: Extract<AICellState, { status: "done" }>): boolean {
  return cell.evidence.length > 0 && cell.sections.length === cell.evidence.length;
}

/** The cell's short "where from": the distinct sections of its quotes ("Exclusion", "Inclusion + Summary"). */
function sourcesOf(cell: Extract<AICellState, { status: "done" }>): string | null {
  if (!placed(cell)) return null;
  return [...new Set(cell.evidence.map((_, i) => sectionLabel(cell.sections[i])))].join(" + ");
}

/** One cell: evaluating…, the answer (click for reasoning and evidence), or an error mark with a retry. */
export function AICell({ ai, column, rowId }: { ai: AIColumns; column: AIColumn; rowId: string }) {
  const [open, setOpen] = useState(false);
  const buttonRef = useRef<HTMLButtonElement>(null);
  const cell = column.run.cells[rowId];
  if (!cell || cell.status === "pending") {
    if (column.run.status === "failed") {
      return (
        <span className="ai-cell not-evaluated" data-testid="ai-cell" data-column={column.name} data-state="not-evaluated" title={column.run.error?.message}>
          not evaluated
        </span>
      );
    }
    return (
      <span className="ai-cell ai-pending" data-testid="ai-cell" data-column={column.name} data-state="pending" aria-busy="true">
        evaluating…
      </span>
    );
  }
  const close = (refocus: boolean) => {
    setOpen(false);
    if (refocus) buttonRef.current?.focus();
  };
  const isError = cell.status === "error";
  const category = cellCategory(column.type, cell);
  const sources = isError ? null : sourcesOf(cell);
  const firstQuote = isError || !placed(cell) ? null : `${sectionLabel(cell.sections[0])}: “${cell.evidence[0]}”`;
  return (
    <span className="ai-cell-wrap">
      <button
        ref={buttonRef}
        type="button"
        className={`ai-cell link-button ${isError ? "ai-error" : CATEGORY_CLASS[category]}`}
        data-testid="ai-cell"
        data-column={column.name}
        data-state={category}
        aria-haspopup="dialog"
        aria-expanded={open}
        title={isError ? cell.message : firstQuote ? `${firstQuote} (click for the reasoning)` : "Show the reasoning"}
        onClick={() => setOpen((o) => !o)}
      >
        {isError ? "⚠ error" : cell.display}
        {sources && (
          <span className="ai-cell-section" data-testid="ai-cell-section">
            {" "}
            ({sources})
          </span>
        )}
      </button>
      {isError && cell.retryable && (
        <button
          type="button"
          className="icon-button small-button"
          data-testid="ai-cell-retry"
          aria-label={`Retry ${column.name} for ${rowId}`}
          title="Retry this row"
          onClick={() => ai.retryRow(column.id, rowId)}
        >
          ↻
        </button>
      )}
      {open && buttonRef.current && (
        <AICellDetails
          column={column}
          rowId={rowId}
          cell={cell}
          anchor={buttonRef.current}
          onClose={close}
          onRetry={() => {
            close(false);
            ai.retryRow(column.id, rowId);
          }}
        />
      )}
    </span>
  );
}

const POPOVER_WIDTH = 380;

const QUALIFIER_NOTE: Record<NonNullable<Extract<AICellState, { status: "done" }>["qualifier"]>, string> = {
  conditional: "Conditional: the evidence limits the criterion to part of what it names (e.g. untreated, unless, within a time).",
  needs_review: "Needs review: the record does not back this answer (no quote found in it, or only a line from the opposite section).",
};

/** The reasoning and evidence behind one cell (or its error): a non-modal dialog next to the cell. */
function AICellDetails({
  column,
  rowId,
  cell,
  anchor,
  onClose,
  onRetry,
}: {
  column: AIColumn;
  rowId: string;
  cell: Exclude<AICellState, { status: "pending" }>;
  anchor: HTMLElement;
  onClose: (refocus: boolean) => void;
  onRetry: () => void;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const [position, setPosition] = useState<{ top: number; left: number }>({ top: 0, left: 0 });
  const onCloseRef = useRef(onClose);
  onCloseRef.current = onClose;

  useLayoutEffect(() => {
    const place = () => {
      const r = anchor.getBoundingClientRect();
      const height = ref.current?.offsetHeight ?? 0;
      const left = Math.max(8, Math.min(r.left, window.innerWidth - POPOVER_WIDTH - 8));
      const below = r.bottom + 4;
      const top = below + height > window.innerHeight && r.top - height - 4 > 8 ? r.top - height - 4 : below;
      setPosition({ top, left });
    };
    place();
    return removeAll([listen(window, "resize", place), listen(window, "scroll", place, true)]);
  }, [anchor]);

  useEffect(() => {
    ref.current?.focus();
    const outside = (e: MouseEvent) => {
      const target = e.target as Node;
      if (!ref.current?.contains(target) && !anchor.contains(target)) onCloseRef.current(false);
    };
    return listen(document, "mousedown", outside);
  }, [anchor]);

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "Escape") {
      e.stopPropagation();
      onClose(true);
    }
  };
  const titleId = `ai-details-${column.id}-${rowId}`;
  return (
    <div
      ref={ref}
      role="dialog"
      aria-labelledby={titleId}
      tabIndex={-1}
      className="ai-popover"
      data-testid="ai-cell-details"
      style={{ top: position.top, left: position.left, width: POPOVER_WIDTH }}
      onKeyDown={onKeyDown}
    >
      <div className="ai-popover-head">
        <h2 id={titleId} className="ai-popover-title">
          {column.name} · <span className="mono">{rowId}</span>
        </h2>
        <button type="button" className="icon-button" aria-label="Close" data-testid="ai-cell-details-close" onClick={() => onClose(true)}>
          ×
        </button>
      </div>
      <p className="muted small ai-popover-criteria">{column.criteria}</p>
      {cell.status === "error" ? (
        <>
          <p className="error-text" data-testid="ai-cell-error">
            {cell.message}
          </p>
          {cell.retryable && (
            <button type="button" data-testid="ai-cell-details-retry" onClick={onRetry}>
              Retry this row
            </button>
          )}
        </>
      ) : (
        <>
          <p>
            <span className={CATEGORY_CLASS[cellCategory(column.type, cell)]} data-testid="ai-cell-answer">
              {cell.display}
            </span>
          </p>
          {cell.qualifier && <p className="small" data-testid="ai-cell-qualifier">{QUALIFIER_NOTE[cell.qualifier]}</p>}
          <h3>Reasoning</h3>
          <p data-testid="ai-cell-reasoning">{cell.reasoning || "The model gave no reasoning."}</p>
          {cell.evidence.length > 0 && (
            <>
              <h3>Evidence</h3>
              <ul className="ai-evidence" data-testid="ai-cell-evidence">
                {cell.evidence.map((quote, i) => (
                  <li key={i}>
                    {placed(cell) && (
                      <>
                        <span className="ai-evidence-section" data-testid="ai-evidence-section">
                          {sectionLabel(cell.sections[i])}:
                        </span>{" "}
                      </>
                    )}
                    {quote}
                  </li>
                ))}
              </ul>
            </>
          )}
          {cell.parseError && <p className="muted small">The model's reply could not be read: {cell.parseError}</p>}
          <p className="muted small">
            {cell.model}
            {cell.cached ? " · from the cache" : ""}
          </p>
        </>
      )}
    </div>
  );
}
