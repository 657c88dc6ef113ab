import { CardShell } from "./CardShell";
import { asText, explanationText } from "./display";
import type { PayloadCardProps } from "./types";

const FILTER_TO_YES = [{ label: "Accept & filter to Yes", testId: "card-accept-filter", options: { filter: "yes" as const } }];

/** `ai_column_suggestion`. Accept adds the column to the table; "Accept & filter to Yes" also keeps only the rows
 * it answers Yes (a Yes/No column). */
export function AIColumnCard(props: PayloadCardProps<"ai_column_suggestion">) {
  const { name, criteria, type, explanation } = props.payload.data;
  return (
    <CardShell {...props} title="Suggested AI column" suggestion alternatives={type === "boolean" ? FILTER_TO_YES : undefined}>
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
