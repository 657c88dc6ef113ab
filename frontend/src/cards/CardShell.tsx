import { useEffect, useRef, useState, type ReactNode } from "react";
import type { AcceptOptions, CardProps } from "./types";

interface CardShellProps extends CardProps {
  title: string;
  children: ReactNode;
  /** Suggestion cards show Accept/Dismiss, and once decided, what was decided. */
  suggestion?: boolean;
  /** More ways to accept, each a button next to Accept ("Accept & filter to Yes"). */
  alternatives?: ReadonlyArray<{ label: string; testId: string; options: AcceptOptions }>;
}

/** The frame shared by every card: title, body, and the decision controls of suggestions. */
export function CardShell({ title, children, suggestion, alternatives, payload, decision, onAccept, onDismiss }: CardShellProps) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const cardRef = useRef<HTMLElement>(null);
  const decisionRef = useRef<HTMLSpanElement>(null);
  /** The decided button disappears: focus moves to what was decided instead of dropping to the page. */
  const refocus = useRef(false);

  useEffect(() => {
    if (decision && refocus.current) {
      refocus.current = false;
      decisionRef.current?.focus();
    }
  }, [decision]);

  const act = async (fn?: () => void | Promise<void>) => {
    if (!fn || busy) return;
    refocus.current = Boolean(cardRef.current?.contains(document.activeElement));
    setBusy(true);
    setError(null);
    try {
      await fn();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section
      ref={cardRef}
      className={`card card-${payload.type}${decision ? ` card-${decision}` : ""}`}
      data-testid={`card-${payload.type}`}
      data-payload-id={payload.id}
      aria-label={title}
    >
      <h3 className="card-title">{title}</h3>
      <div className="card-body">{children}</div>
      {suggestion && (
        <div className="card-actions">
          {decision ? (
            <span ref={decisionRef} tabIndex={-1} className={`card-decision decision-${decision}`} data-testid="card-decision" role="status">
              {decision === "accepted" ? "✓ Accepted" : "Dismissed"}
            </span>
          ) : (
            <>
              <button
                type="button"
                className="primary"
                data-testid="card-accept"
                disabled={busy || !onAccept}
                title={onAccept ? undefined : "This page cannot apply this suggestion"}
                onClick={() => act(onAccept)}
              >
                Accept
              </button>
              {alternatives?.map((alt) => (
                <button
                  key={alt.testId}
                  type="button"
                  data-testid={alt.testId}
                  disabled={busy || !onAccept}
                  onClick={() => act(onAccept && (() => onAccept(alt.options)))}
                >
                  {alt.label}
                </button>
              ))}
              <button type="button" data-testid="card-dismiss" disabled={busy || !onDismiss} onClick={() => act(onDismiss)}>
                Dismiss
              </button>
            </>
          )}
          {error && (
            <span className="card-error" role="alert">
              {error}
            </span>
          )}
        </div>
      )}
    </section>
  );
}
