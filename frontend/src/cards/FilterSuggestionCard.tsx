import { CardShell } from "./CardShell";
import { asText } from "./display";
import type { PayloadCardProps } from "./types";

const OPERATORS: Readonly<Record<string, string>> = { equals: "is", contains: "contains", gte: "is at least", lte: "is at most" };

/** `filter_suggestion`. Accept applies the filter where the page keeps its results (or query). */
export function FilterSuggestionCard(props: PayloadCardProps<"filter_suggestion">) {
  const { field, operator, value, explanation } = props.payload.data;
  const op = typeof operator === "string" ? operator : "";
  return (
    <CardShell {...props} title="Suggested filter" suggestion>
      <p className="filter-rule" data-testid="card-filter">
        <strong>{asText(field).replace(/_/g, " ")}</strong> {Object.prototype.hasOwnProperty.call(OPERATORS, op) ? OPERATORS[op] : op || "is"}{" "}
        <code>{asText(value)}</code>
      </p>
      {explanation ? <p className="card-explanation">{asText(explanation)}</p> : null}
    </CardShell>
  );
}
