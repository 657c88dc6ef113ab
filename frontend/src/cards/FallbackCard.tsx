import { CardShell } from "./CardShell";
import type { CardProps } from "./types";

/** Any payload type this build has no card for: show its data, never fail. */
export function FallbackCard(props: CardProps) {
  return (
    <CardShell {...props} title={props.payload.type.replace(/_/g, " ")}>
      <details>
        <summary>Show data</summary>
        <pre className="code-block">{JSON.stringify(props.payload.data, null, 2)}</pre>
      </details>
    </CardShell>
  );
}
