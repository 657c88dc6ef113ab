import { CardShell } from "./CardShell";
import { asText } from "./display";
import type { PayloadCardProps } from "./types";

/** `query_suggestion`. On the stream editor Accept makes it the stream's default PubMed query (unsaved). */
export function QuerySuggestionCard(props: PayloadCardProps<"query_suggestion">) {
  const { query, explanation } = props.payload.data;
  return (
    <CardShell {...props} title="Suggested search query" suggestion>
      <pre className="code-block">
        <code data-testid="card-query">{asText(query)}</code>
      </pre>
      {explanation ? <p className="card-explanation">{asText(explanation)}</p> : null}
    </CardShell>
  );
}
