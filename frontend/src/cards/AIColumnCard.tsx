import { CardShell } from "./CardShell";
import { asText, explanationText } from "./display";
import type { PayloadCardProps } from "./types";

/** `ai_column_suggestion`. Accept adds the column to the table. */
export function AIColumnCard(props: PayloadCardProps<"ai_column_suggestion">) {
  const { name, criteria, type, explanation } = props.payload.data;
  return (
    <CardShell {...props} title="Suggested AI column" suggestion>
      <dl className="fields">
        <dt>Name</dt>
        <dd data-testid="card-column-name">{asText(name)}</dd>
        <dt>Type</dt>
        <dd>{type === "boolean" ? "Yes/No" : "Text"}</dd>
      </dl>
      <div className="criteria-block">{asText(criteria)}</div>
      {explanation ? <p className="card-explanation">{explanationText(explanation)}</p> : null}
    </CardShell>
  );
}
