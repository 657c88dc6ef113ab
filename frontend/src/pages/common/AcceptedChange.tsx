/** Beside the results summary: the last accepted card's change ("Replaced 'lung cancer' (24) → 'EGFR…' (2)") and Undo. */
import type { AcceptUndo } from "../../state/undo";

export function AcceptedChange({ undo }: { undo: AcceptUndo }) {
  const latest = undo.latest;
  if (!latest) return null;
  return (
    <p className="accepted-change small" data-testid="accepted-change" role="status">
      <span>{latest.summary}</span>
      {" · "}
      <button type="button" className="link-button" data-testid="accepted-undo" onClick={() => undo.undo(latest.id)}>
        Undo
      </button>
    </p>
  );
}
