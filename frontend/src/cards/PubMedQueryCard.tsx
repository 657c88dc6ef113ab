import { CardShell } from "./CardShell";
import { asText } from "./display";
import type { CardProps } from "./types";

/** `pubmed_query_suggestion`: {query, explanation}. Accept puts the query in Tablizer's search box and runs it. */
export function PubMedQueryCard(props: CardProps) {
  const { query, explanation } = props.payload.data;
  return (
    <CardShell {...props} title="Suggested PubMed query" suggestion>
      <pre className="code-block">
        <code data-testid="card-query">{asText(query)}</code>
      </pre>
      {explanation ? <p className="card-explanation">{asText(explanation)}</p> : null}
    </CardShell>
  );
}
