import { CardShell } from "./CardShell";
import { asText, explanationText } from "./display";
import type { PayloadCardProps } from "./types";

/** `pubmed_query_suggestion`. Accept puts the query in Tablizer's search box and runs it. */
export function PubMedQueryCard(props: PayloadCardProps<"pubmed_query_suggestion">) {
  const { query, explanation, date_start, date_end } = props.payload.data;
  return (
    <CardShell {...props} title="Suggested PubMed query" suggestion>
      <pre className="code-block">
        <code data-testid="card-query">{asText(query)}</code>
      </pre>
      {date_start || date_end ? (
        <p className="small" data-testid="card-dates">
          Published {asText(date_start) || "any time"} – {asText(date_end) || "any time"}
        </p>
      ) : null}
      {explanation ? <p className="card-explanation">{explanationText(explanation)}</p> : null}
    </CardShell>
  );
}
