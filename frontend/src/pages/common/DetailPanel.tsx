import { useEffect, useRef, type ReactNode } from "react";
import { useFocusTrap, useIsPhone, useReturnFocus } from "../../modalSheet";

/** A side panel for an article or trial: focus moves in on open, Escape or × closes it and focus goes back to
 * what opened it. On a phone it is a full-screen sheet, so a modal dialog that keeps focus inside. */
export function DetailPanel({ title, onClose, children }: { title: string; onClose: () => void; children: ReactNode }) {
  const ref = useRef<HTMLElement>(null);
  const phone = useIsPhone();
  useFocusTrap(ref, phone);
  useReturnFocus(ref);
  useEffect(() => {
    ref.current?.focus();
  }, [title]);
  return (
    <section
      ref={ref}
      className="detail-panel"
      role="dialog"
      aria-modal={phone ? "true" : "false"}
      aria-label={title}
      tabIndex={-1}
      data-testid="detail-panel"
      onKeyDown={(e) => {
        if (e.key === "Escape") {
          e.stopPropagation();
          onClose();
        }
      }}
    >
      <header className="detail-header">
        <h2>{title}</h2>
        <button type="button" className="icon-button" aria-label="Close details" data-testid="detail-close" onClick={onClose}>
          ×
        </button>
      </header>
      <div className="detail-body">{children}</div>
    </section>
  );
}
