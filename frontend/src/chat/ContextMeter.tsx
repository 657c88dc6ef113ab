/**
 * The tray's quiet status line: how full the conversation's context window is. It reads the last
 * request's input (`context_update`: what the next turn carries), never a sum over the turn's model
 * calls, and warns before the window fills. The turn's cost (`usage`) is in the tooltip.
 */
import type { ContextUsage, Usage } from "../api/types";

/** From this share of the window on, the meter warns. */
export const CONTEXT_WARN_SHARE = 0.8;

function compact(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(n >= 10000 ? 0 : 1)}k` : String(n);
}

export function ContextMeter({ context, usage }: { context: ContextUsage; usage: Usage | null }) {
  const share = context.context_window > 0 ? Math.min(1, context.input_tokens / context.context_window) : 0;
  const warn = share >= CONTEXT_WARN_SHARE;
  const cost = usage
    ? ` · last turn: input ${((usage.input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0)).toLocaleString()}` +
      ` (cache read ${(usage.cache_read_input_tokens ?? 0).toLocaleString()}), output ${(usage.output_tokens ?? 0).toLocaleString()}`
    : "";
  const title =
    `The next message carries ${context.input_tokens.toLocaleString()} of ${context.context_window.toLocaleString()} tokens ` +
    `(${context.model}, ${context.turns} turn${context.turns === 1 ? "" : "s"}, compaction ${context.compaction ? "on" : "off"})${cost}`;
  return (
    <div className={warn ? "usage context-meter context-meter-warn" : "usage context-meter"} data-testid="context-meter" title={title}>
      <meter min={0} max={1} low={0.5} high={CONTEXT_WARN_SHARE} optimum={0} value={share} aria-label="Context used" />
      <span>
        Context {compact(context.input_tokens)} / {compact(context.context_window)} · {Math.round(share * 100)}%
      </span>
      {warn && (
        <span role="status" data-testid="context-warning" className="context-warning">
          {context.compaction
            ? "Nearly full: older messages will be trimmed soon."
            : "Nearly full: start a new conversation or turn compaction on."}
        </span>
      )}
    </div>
  );
}
