import { CardShell } from "./CardShell";
import { asText } from "./display";
import { FieldList } from "./FieldList";
import type { PayloadCardProps } from "./types";

/** `schema_proposal`. Accept puts the changes in the stream's definition (unsaved). */
export function SchemaProposalCard(props: PayloadCardProps<"schema_proposal">) {
  const { proposed_changes, confidence, reasoning } = props.payload.data;
  const changes = proposed_changes && typeof proposed_changes === "object" && !Array.isArray(proposed_changes) ? Object.entries(proposed_changes) : [];
  return (
    <CardShell {...props} title="Proposed definition changes" suggestion>
      <FieldList testId="card-changes" rows={changes.map(([key, value]) => [key.replace(/_/g, " "), asText(value)] as const)} />
      {confidence ? <p className="small">Confidence: {asText(confidence)}</p> : null}
      {reasoning ? <p className="card-explanation">{asText(reasoning)}</p> : null}
    </CardShell>
  );
}
