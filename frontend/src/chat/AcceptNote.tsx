/** Under an accepted card: what applying it changed on the page, and Undo (while the page can still undo it). */
import { useContext, useState } from "react";
import { ResultsCountContext } from "../resultsCount";
import { ShellContext } from "../shellContext";
import type { AcceptOutcome } from "../state/undo";

/** On a phone the tray covers the page: after Accept, one tap closes it onto the results it changed. */
function ViewResults() {
  const count = useContext(ResultsCountContext);
  const shell = useContext(ShellContext);
  if (count == null || !shell) return null;
  return (
    <button type="button" className="view-results small-button" data-testid="view-results" onClick={() => {
      shell.setChatOpen(false);
      setTimeout(() => document.querySelector("[data-testid='results-summary']")?.scrollIntoView({ block: "start" }), 0);
    }}>
      View {count} {count === 1 ? "result" : "results"}
    </button>
  );
}

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
      {state !== "undone" && <> <ViewResults /></>}
    </p>
  );
}
