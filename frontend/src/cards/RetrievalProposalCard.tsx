import { CardShell } from "./CardShell";
import { asText, displayValue } from "./display";
import { FieldList } from "./FieldList";
import type { PayloadCardProps } from "./types";

/** `retrieval_proposal`. Accept fills the stream's retrieval defaults (unsaved). */
export function RetrievalProposalCard(props: PayloadCardProps<"retrieval_proposal">) {
  const { pubmed_query, trial_search, reasoning } = props.payload.data;
  const trial =
    trial_search && typeof trial_search === "object" && !Array.isArray(trial_search)
      ? Object.entries(trial_search).filter(([, v]) => v != null && v !== "" && !(Array.isArray(v) && v.length === 0))
      : [];
  return (
    <CardShell {...props} title="Proposed retrieval setup" suggestion>
      {pubmed_query ? (
        <>
          <p className="small">PubMed query (Tablizer)</p>
          <pre className="code-block">
            <code data-testid="card-query">{asText(pubmed_query)}</code>
          </pre>
        </>
      ) : null}
      {trial.length > 0 && (
        <>
          <p className="small">Trial search (TrialScout)</p>
          <FieldList testId="card-trial-search" rows={trial.map(([key, value]) => [key.replace(/_/g, " "), displayValue(value)] as const)} />
        </>
      )}
      {reasoning ? <p className="card-explanation">{asText(reasoning)}</p> : null}
    </CardShell>
  );
}
