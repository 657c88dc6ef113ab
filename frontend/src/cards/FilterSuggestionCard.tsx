/** A `filter_suggestion`: narrow the loaded table by a field; Accept adds it as a removable filter chip. */
import { CardShell } from "./CardShell";
import type { CardProps } from "./types";

const OPERATORS: Record<string, string> = { equals: "is", contains: "contains", gte: "is at least", lte: "is at most" };

export function FilterSuggestionCard(props: CardProps) {
  const { field, operator, value, explanation } = props.payload.data as Record<string, unknown>;
  const name = String(field ?? "?").replace(/_/g, " ");
  return (
    <CardShell {...props} title="Filter the table" suggestion>
      <p data-testid="filter-suggestion-text">
        <strong>{name}</strong> {OPERATORS[String(operator)] ?? String(operator ?? "")} <strong>{String(value ?? "")}</strong>
      </p>
      {typeof explanation === "string" && explanation && <p className="muted small">{explanation}</p>}
    </CardShell>
  );
}
