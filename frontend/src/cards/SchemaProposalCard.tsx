import { CardShell } from "./CardShell";
import { asText } from "./display";
import type { PayloadCardProps } from "./types";

/** `schema_proposal`. Accept puts the changes in the stream's definition (unsaved). */
export function SchemaProposalCard(props: PayloadCardProps<"schema_proposal">) {
  const { proposed_changes, confidence, reasoning } = props.payload.data;
  const changes = proposed_changes && typeof proposed_changes === "object" && !Array.isArray(proposed_changes) ? Object.entries(proposed_changes) : [];
  return (
    <CardShell {...props} title="Proposed definition changes" suggestion>
      <dl className="fields" data-testid="card-changes">
        {changes.map(([key, value]) => (
          <div key={key} className="field-row">
            <dt>{key.replace(/_/g, " ")}</dt>
            <dd>{asText(value)}</dd>
          </div>
        ))}
      </dl>
      {confidence ? <p className="small">Confidence: {asText(confidence)}</p> : null}
      {reasoning ? <p className="card-explanation">{asText(reasoning)}</p> : null}
    </CardShell>
  );
}
