/** Under an accepted card: what applying it changed on the page, and Undo (while the page can still undo it). */
import { useState } from "react";
import type { AcceptOutcome } from "../state/undo";

export function AcceptNote({ outcome }: { outcome: AcceptOutcome }) {
  const [, rerender] = useState(0);
  const state = outcome.state();
  return (
    <p className="accept-note small" data-testid="accept-note" role="status">
      <span>{outcome.summary}</span>
      {state === "active" && (
        <>
          {" · "}
          <button
            type="button"
            className="link-button"
            data-testid="accept-undo"
            onClick={() => {
              outcome.undo();
              rerender((n) => n + 1);
            }}
          >
            Undo
          </button>
        </>
      )}
      {state === "undone" && <span className="muted"> · Undone</span>}
    </p>
  );
}
